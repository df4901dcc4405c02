package dev.tapedeck.cli.inspect;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.tapedeck.latency.StepProfileFile;
import dev.tapedeck.latency.fit.TraceGapFit;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

/**
 * {@code inspect fit --trace FILE[,FILE...]}: the step model fitted per gap to traces whose records carry
 * {@code itl_ms} with {@code itl_ctx} ({@link TraceGapFit}), written as a linear profile with its provenance.
 * Stateless; runs on the calling thread.
 */
final class TraceFitSource
{
    private TraceFitSource()
    {
    }

    /**
     * @param files the traces, each its own capture.
     * @param out the profile file to write.
     * @param name the profile's name, or null for the first file's name plus {@code -fitted}.
     * @param contextTerm fit the KV-context term.
     * @param print where the summary goes.
     * @throws IOException when a trace cannot be read (a bad line with file and line number) or the profile written.
     */
    static void fit(final List<Path> files, final Path out, final String name, final boolean contextTerm,
        final PrintWriter print) throws IOException
    {
        final List<List<TraceRecord>> captures = new ArrayList<>();
        int records = 0;
        for (final Path file : files)
        {
            if (!Files.isRegularFile(file))
            {
                throw new IOException(file + ": no such file");
            }
            final TraceReader.Trace trace = TraceReader.readAll(file);
            for (final String warning : trace.warnings())
            {
                print.println("warning: " + file + ": " + warning);
            }
            captures.add(trace.records());
            records += trace.records().size();
        }
        final String profileName = null != name ? name :
            files.get(0).getFileName().toString().replaceFirst("\\.jsonl(\\.gz)?$", "") + "-fitted";
        final String source = "fitted by tapedeck inspect fit --trace to the per-token gaps of " + files;
        final TraceGapFit.Result fit;
        try
        {
            fit = TraceGapFit.fit(captures, profileName, source, contextTerm);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException(String.join(",", files.stream().map(Path::toString).toList()) + ": " +
                ex.getMessage(), ex);
        }
        final double mapePct = fit.meanAbsolutePercentageError() * 100;
        print.printf(Locale.ROOT, "traces: %d records in %d file(s), %d with itl_ctx used, %d without it left out%n",
            records, files.size(), fit.recordsUsed(), fit.recordsWithoutContext());
        print.printf(Locale.ROOT, "gaps: %d one-token gaps fitted, %d multi-token gaps left out%n", fit.gapsUsed(),
            fit.multiTokenGaps());
        print.printf(Locale.ROOT, "MAPE of the gaps: %.2f%% (in sample)%n", mapePct);
        final ObjectNode provenance = JsonNodeFactory.instance.objectNode();
        provenance.put("method", "tapedeck inspect fit --trace: TraceGapFit, one equation per one-token gap (one " +
            "step): prefill tokens from itl_ctx.prefill_tokens, decodes = itl_ctx.num_running less one when the step " +
            "prefilled, their KV context = decodes x the mean context (prompt + tokens so far) of the capture's " +
            "records decoding at that moment; least squares with a negative term dropped and the rest refitted");
        provenance.putPOJO("data", files.stream().map(f -> f.toAbsolutePath().normalize().toString()).toList());
        provenance.put("records", records);
        provenance.put("records_used", fit.recordsUsed());
        provenance.put("records_without_itl_ctx", fit.recordsWithoutContext());
        provenance.put("gaps_used", fit.gapsUsed());
        provenance.put("multi_token_gaps_left_out", fit.multiTokenGaps());
        provenance.put("context_term", contextTerm);
        provenance.put("in_sample_mape_pct", Math.round(mapePct * 100) / 100.0);
        StepProfileFile.write(out, fit.coefficients(), 0, provenance);
        print.printf(Locale.ROOT, "profile: %s (%s)%n", out, fit.coefficients());
        print.flush();
    }
}
