package dev.tapedeck.simulate.fit;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;


/**
 * Leave-one-workload-out check of {@code inspect fit} on the BLIS H100 training runs of one model (read from
 * ../shared; never copied): for each of its workloads (general, codegen, roleplay), fit on the others and predict it.
 * Prints the APE per metric.
 * Usage: {@code BlisFitMain DATA_DIR MODEL_SUBSTRING [seconds per stage] [evaluations]}.
 */
public final class BlisFitMain
{
    private BlisFitMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path data = Path.of(args[0]);
        final String model = args[1];
        final double seconds = args.length > 2 ? Double.parseDouble(args[2]) : 120;
        final int evaluations = args.length > 3 ? Integer.parseInt(args[3]) : 120;
        final List<BlisExperiment> usable = BlisExperiment.readAll(data, model).stream()
            .filter(e -> !e.overloaded()).toList();
        final StepFit.Fitted everything = StepFit.fit(usable, model, 20_000, seconds, evaluations);
        System.out.println("fit on all: " + everything);
        for (final BlisExperiment held : usable)
        {
            final List<BlisExperiment> train = usable.stream().filter(e -> e != held).toList();
            final StepFit.Fitted c = StepFit.fit(train, model, 20_000, seconds, evaluations);
            for (final StageReplay.Comparison cmp : StepFit.compare(held, c, 20_000, seconds))
            {
                System.out.printf(Locale.ROOT, "held-out %-40s stage %d %-9s real %9.2f pred %9.2f APE %6.1f%%%n",
                    held.name(), cmp.stage(), cmp.metric(), cmp.measured(), cmp.predicted(), cmp.ape());
            }
        }
    }
}
