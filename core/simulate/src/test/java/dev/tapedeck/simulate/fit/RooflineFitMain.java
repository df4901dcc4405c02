package dev.tapedeck.simulate.fit;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.tapedeck.latency.GpuSpec;
import dev.tapedeck.latency.RooflineCoefficients;

/**
 * Out-of-sample checks of the physics step model on the BLIS H100 training runs (read from ../shared; never copied).
 * <ol>
 *   <li>Fit one set of corrections on every model: the in-sample error.</li>
 *   <li>Leave one model out: fit on the other models, predict every run of the held-out one (a model never
 *       measured).</li>
 *   <li>Leave one run out: fit across models without that run, then fit its model's profile from the model's other
 *       runs (pulled towards the across-model fit), and predict the held-out run (a new workload on a measured
 *       model).</li>
 * </ol>
 * Prints every held-out stage and the median APE per metric. Usage: {@code RooflineFitMain DATA_DIR [seconds per
 * stage] [rounds] [pins]}, pins an ablation that holds corrections fixed (and frees the experts' factor the product
 * holds) such as {@code request=0,layer=0} (names of
 * {@link RooflineCoefficients#values()}: step, layer, request, compute, weights, kv, comm, all_reduce, experts).
 */
public final class RooflineFitMain
{
    private static final String[] MODELS = {"llama-2-7b", "llama-2-70b", "mixtral-8x7b", "codellama-34b"};

    private RooflineFitMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path data = Path.of(args[0]);
        seconds = args.length > 1 ? Double.parseDouble(args[1]) : 60;
        rounds = args.length > 2 ? Integer.parseInt(args[2]) : 12;
        pinsOrNull = pins(args.length > 3 ? args[3] : "");
        final GpuSpec h100 = GpuSpec.lookup("H100");
        final List<BlisExperiment> usable = BlisExperiment.readAll(data, "").stream()
            .filter(e -> !e.overloaded()).toList();
        final RooflineFit.Fitted all = fit(usable, RooflineFit.DATA_SHEET, "h100");
        System.out.println("across models: " + all);
        report("in sample, across models", RooflineFit.compareAll(usable, h100, all, seconds));
        for (final String model : MODELS)
        {
            final List<BlisExperiment> own = usable.stream().filter(e -> e.name().contains(model)).toList();
            final RooflineFit.Fitted f = fit(own, all, model);
            System.out.println("profile " + model + ": " + f);
            report("in sample, profile " + model, RooflineFit.compareAll(own, h100, f, seconds));
        }
        final List<StageReplay.Comparison> lomo = new ArrayList<>();
        for (final String model : MODELS)
        {
            final List<BlisExperiment> train = usable.stream().filter(e -> !e.name().contains(model)).toList();
            final List<BlisExperiment> test = usable.stream().filter(e -> e.name().contains(model)).toList();
            final RooflineFit.Fitted f = fit(train, RooflineFit.DATA_SHEET, "without-" + model);
            lomo.addAll(print("leave-model-out", RooflineFit.compareAll(test, h100, f, seconds)));
        }
        final List<StageReplay.Comparison> loro = new ArrayList<>();
        for (final BlisExperiment held : usable)
        {
            final String model = modelOf(held);
            final List<BlisExperiment> rest = usable.stream().filter(e -> e != held).toList();
            final RooflineFit.Fitted across = fit(rest, RooflineFit.DATA_SHEET, "across");
            final List<BlisExperiment> own = rest.stream().filter(e -> e.name().contains(model)).toList();
            final RooflineFit.Fitted profile = fit(own, across, model);
            loro.addAll(print("leave-run-out", RooflineFit.compare(held, h100, profile, seconds)));
        }
        report("leave one model out", lomo);
        report("leave one run out (model profile)", loro);
    }

    /** The ablation's pins, or null for the product's fit. */
    private static double[] pinsOrNull;
    private static double seconds;
    private static int rounds;

    private static RooflineFit.Fitted fit(final List<BlisExperiment> runs, final RooflineFit.Fitted prior,
        final String name)
    {
        final GpuSpec h100 = GpuSpec.lookup("H100");
        return null == pinsOrNull ? RooflineFit.fit(runs, h100, prior, name, seconds, rounds) :
            RooflineFit.fit(runs, h100, prior, name, seconds, rounds, pinsOrNull);
    }

    private static double[] pins(final String text)
    {
        if (text.isBlank())
        {
            return null;
        }
        final List<String> names = List.of("step", "layer", "request", "compute", "weights", "kv", "comm",
            "all_reduce", "experts");
        final double[] pins = new double[names.size()];
        java.util.Arrays.fill(pins, Double.NaN);
        for (final String pin : text.split(","))
        {
            if (!pin.isBlank())
            {
                final String[] kv = pin.split("=");
                pins[names.indexOf(kv[0].trim())] = Double.parseDouble(kv[1].trim());
            }
        }
        return pins;
    }

    private static String modelOf(final BlisExperiment e)
    {
        for (final String model : MODELS)
        {
            if (e.name().contains(model))
            {
                return model;
            }
        }
        throw new IllegalArgumentException(e.name());
    }

    private static List<StageReplay.Comparison> print(final String title, final List<StageReplay.Comparison> c)
    {
        for (final StageReplay.Comparison cmp : c)
        {
            System.out.printf(Locale.ROOT, "%s %-48s stage %d %-9s real %9.2f pred %9.2f APE %6.1f%%%n", title,
                cmp.experiment(), cmp.stage(), cmp.metric(), cmp.measured(), cmp.predicted(), cmp.ape());
        }
        return c;
    }

    static void report(final String title, final List<StageReplay.Comparison> comparisons)
    {
        final Map<String, List<Double>> byMetric = new LinkedHashMap<>();
        for (final StageReplay.Comparison c : comparisons)
        {
            byMetric.computeIfAbsent(c.metric(), k -> new ArrayList<>()).add(c.ape());
        }
        final StringBuilder line = new StringBuilder(title + ": median APE");
        for (final Map.Entry<String, List<Double>> e : byMetric.entrySet())
        {
            final List<Double> sorted = e.getValue().stream().sorted().toList();
            final int n = sorted.size();
            final double median = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
            line.append(String.format(Locale.ROOT, " %s %.1f%%", e.getKey(), median));
        }
        System.out.println(line + " (" + comparisons.size() / Math.max(1, byMetric.size()) + " stages)");
    }
}
