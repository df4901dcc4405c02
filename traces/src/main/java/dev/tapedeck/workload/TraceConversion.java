package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * Sources with measured per-request results as vllm-vcr traces ({@code TraceRecord} schema, written with
 * {@code TraceWriter}; gzip when the output name ends with {@code .gz}):
 * <ul>
 *   <li>a guidellm report, as vcr's {@code from-guidellm} converts it: one record per successful request with
 *       {@code prompt_tokens}, {@code cached_tokens} (0 unless the report has them), {@code output_tokens},
 *       {@code ttft_ms}, {@code itl_summary{mean_ms, count = output_tokens - 1}}, {@code concurrency} from the
 *       benchmark's strategy, meta {@code source: guidellm} and the model of {@code args}; unlike vcr, also
 *       {@code arrival_ms} from the request start times;</li>
 *   <li>a {@code vllm bench serve --save-detailed} result: {@code ttft_ms}, per-chunk {@code itl_ms}, and when
 *       {@code start_times} exist {@code arrival_ms} and {@code concurrency}, meta {@code source: vllm-bench}.</li>
 * </ul>
 * The trace is written next to {@code out} under a temporary name and moved into place once complete, so a source
 * that turns out malformed halfway leaves no partial trace behind. Stateless; thread safe.
 */
public final class TraceConversion
{
    private TraceConversion()
    {
    }

    /**
     * What a conversion wrote.
     *
     * @param records records written.
     * @param spanMs first to last {@code arrival_ms}, 0 without arrivals.
     * @param notes what was assumed, skipped or left out.
     */
    public record Result(long records, double spanMs, List<String> notes)
    {
        /**
         * Copies the notes.
         */
        public Result
        {
            notes = List.copyOf(notes);
        }
    }

    /**
     * @param in the source file.
     * @param format its format; must have {@link WorkloadFormat#hasResults() results}.
     * @param model the model for the trace's meta line, or null for the one the source names.
     * @param out the trace to write.
     * @return what was written.
     * @throws IOException if a file cannot be read or written.
     * @throws IllegalArgumentException if the format has no measured results or the source is malformed.
     */
    public static Result toTrace(final Path in, final WorkloadFormat format, final String model, final Path out)
        throws IOException
    {
        if (!format.hasResults())
        {
            throw new IllegalArgumentException(format + " has no measured results (TTFT, ITL) to make a trace of: " +
                "convert it to a workload; only guidellm and vllm-bench convert to traces");
        }
        final Path partial = out.toAbsolutePath().resolveSibling(".partial-" + out.getFileName());
        try
        {
            final Result result = WorkloadFormat.GUIDELLM == format ? GuidellmReport.read(in).writeTrace(partial,
                model) : VllmBenchResult.read(in).writeTrace(partial, model);
            Files.move(partial, out, StandardCopyOption.REPLACE_EXISTING);
            return result;
        }
        finally
        {
            Files.deleteIfExists(partial);
        }
    }
}
