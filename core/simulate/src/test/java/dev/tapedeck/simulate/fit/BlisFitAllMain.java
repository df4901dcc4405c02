package dev.tapedeck.simulate.fit;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import dev.tapedeck.latency.StepCoefficients;

/**
 * Fits one model's step profile on all of its BLIS H100 training runs but the overloaded reasoning ones (read from
 * ../shared; never copied), and prints the coefficients and the in-sample comparison of every stage. How the shipped
 * H100 profiles were made. Usage: {@code BlisFitAllMain DATA_DIR MODEL_SUBSTRING [seconds per stage] [evaluations]}.
 */
public final class BlisFitAllMain
{
    private BlisFitAllMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path data = Path.of(args[0]);
        final String model = args[1];
        final double seconds = args.length > 2 ? Double.parseDouble(args[2]) : 120;
        final int evaluations = args.length > 3 ? Integer.parseInt(args[3]) : 150;
        final List<BlisExperiment> usable = BlisExperiment.readAll(data, model).stream()
            .filter(e -> !e.overloaded()).toList();
        final StepFit.Fitted fitted = StepFit.fit(usable, model, 20_000, seconds, evaluations);
        final StepCoefficients k = fitted.coefficients();
        System.out.printf(Locale.ROOT, "%s: base %.1f us, prefill %.3f us/token, decode %.3f us/request, " +
            "context %.3f us/1k tokens, frontend %.1f us%n", model, k.baseUs(), k.prefillTokenUs(),
            k.decodeRequestUs(), k.contextKiloTokenUs(), fitted.frontendUs());
        for (final BlisExperiment e : usable)
        {
            for (final StepFit.Comparison c : StepFit.compare(e, fitted, 20_000, seconds))
            {
                System.out.printf(Locale.ROOT, "in-sample %-42s stage %d %-9s real %9.2f pred %9.2f APE %6.1f%%%n",
                    e.name(), c.stage(), c.metric(), c.measured(), c.predicted(), c.ape());
            }
        }
    }
}
