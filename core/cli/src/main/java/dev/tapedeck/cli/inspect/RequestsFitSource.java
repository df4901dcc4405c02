package dev.tapedeck.cli.inspect;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.tapedeck.latency.StepProfileFile;
import dev.tapedeck.latency.fit.MeasuredRequest;
import dev.tapedeck.latency.fit.StepModelFit;

/**
 * {@code inspect fit --requests FILE}: the step model fitted to a real run's per-request engine timestamps
 * (LLMServingSim's {@code requests.jsonl}) by {@link StepModelFit}, written as a linear profile with its provenance.
 * Stateless; runs on the calling thread.
 */
final class RequestsFitSource
{
    private RequestsFitSource()
    {
    }

    /**
     * @param file the {@code requests.jsonl}.
     * @param out the profile file to write.
     * @param name the profile's name, or null for the run directory's name plus {@code -fitted}.
     * @param contextTerm fit the KV-context term.
     * @param print where the summary goes.
     * @throws IOException when the file cannot be read (a bad line with file and line number) or the profile written.
     */
    static void fit(final Path file, final Path out, final String name, final boolean contextTerm,
        final PrintWriter print) throws IOException
    {
        if (!Files.isRegularFile(file))
        {
            throw new IOException(file + ": no such file");
        }
        final List<MeasuredRequest> requests = MeasuredRequest.readLlmServingSim(file);
        final String profileName = null != name ? name : defaultName(file);
        final String source = "fitted by tapedeck inspect fit --requests to " + requests.size() + " requests of " +
            file.toAbsolutePath().normalize();
        final StepModelFit.Result fit = StepModelFit.fit(requests, profileName, source, contextTerm);
        final double mapePct = fit.meanAbsolutePercentageError() * 100;
        print.printf(Locale.ROOT, "requests: %s (%d read, %d with 21+ output tokens used)%n", file,
            requests.size(), fit.requestsUsed());
        print.printf(Locale.ROOT, "MAPE of the decode windows: %.2f%% (in sample)%n", mapePct);
        final ObjectNode provenance = JsonNodeFactory.instance.objectNode();
        provenance.put("method", "tapedeck inspect fit --requests: StepModelFit, one equation per request's decode " +
            "window (first to last token = output - 1 steps), the other requests' prefill and decode spread over " +
            "their windows, least squares with a negative term dropped and the rest refitted");
        provenance.put("data", file.toAbsolutePath().normalize().toString());
        provenance.put("requests", requests.size());
        provenance.put("requests_used", fit.requestsUsed());
        provenance.put("context_term", contextTerm);
        provenance.put("in_sample_mape_pct", Math.round(mapePct * 100) / 100.0);
        StepProfileFile.write(out, fit.coefficients(), 0, provenance);
        print.printf(Locale.ROOT, "profile: %s (%s)%n", out, fit.coefficients());
        print.flush();
    }

    /** {@code RUN-fitted} for {@code .../RUN/requests.jsonl}, else the file name without its extension. */
    private static String defaultName(final Path file)
    {
        final Path absolute = file.toAbsolutePath().normalize();
        final String base = absolute.getFileName().toString();
        final Path parent = absolute.getParent();
        final String stem = "requests.jsonl".equals(base) && null != parent && null != parent.getFileName() ?
            parent.getFileName().toString() : base.replaceFirst("\\.jsonl(\\.gz)?$", "");
        return stem + "-fitted";
    }
}
