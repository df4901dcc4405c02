package dev.tapedeck.load;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Load reports built by {@link LoadReport#build} from recorders fed with known measurements (no sockets), so tests of
 * the report renderers see exactly the schema a real run writes.
 */
public final class LoadReportSamples
{
    /** A model name that would inject markup if it were not escaped. */
    public static final String HOSTILE_MODEL = "<script>alert(1)</script>";

    private LoadReportSamples()
    {
    }

    /**
     * @param label the point's name.
     * @param requests completed requests, spread over the seconds.
     * @param seconds measured seconds (and timeline length).
     * @param ttftMs base TTFT; request i takes {@code ttftMs * (1 + i % 10 / 10)}.
     * @param outputTokens output tokens per request.
     * @param failures requests failed with {@code http_503}.
     * @return the run.
     */
    public static RunResult run(final String label, final int requests, final int seconds, final double ttftMs,
        final int outputTokens, final int failures)
    {
        final RunRecorder recorder = new RunRecorder();
        for (int i = 0; i < requests; i++)
        {
            final int second = (int)((long)i * seconds / requests);
            final long ttftNs = (long)(ttftMs * 1e6 * (1 + i % 10 / 10.0));
            final long gapNs = 10_000_000L + i % 7 * 1_000_000L;
            recorder.onStarted(second, 50_000L * (i % 5), true);
            for (int t = 1; t < outputTokens; t++)
            {
                recorder.onTokenGap(gapNs, 1);
            }
            recorder.onCompleted(second, ttftNs, ttftNs + gapNs * (outputTokens - 1), 100, outputTokens, gapNs,
                0 != i % 4, true);
        }
        for (int i = 0; i < failures; i++)
        {
            recorder.onStarted(0, 0, true);
            recorder.onFailed(0, "http_503", true);
        }
        final long[] inFlight = new long[seconds];
        for (int s = 0; s < seconds; s++)
        {
            inFlight[s] = 3 + s % 4;
        }
        return new RunResult(label, label + " plan", recorder, inFlight, seconds, requests + failures,
            List.of("note of " + label + ": <b>not bold</b>"));
    }

    /**
     * @param seconds timeline length.
     * @return one server sample per second, as {@code --scrape-metrics} records them.
     */
    public static List<Map<String, Double>> server(final int seconds)
    {
        final List<Map<String, Double>> series = new ArrayList<>();
        for (int s = 0; s < seconds; s++)
        {
            final Map<String, Double> sample = new LinkedHashMap<>();
            sample.put("running", 4.0 + s % 3);
            sample.put("waiting", (double)(s % 2));
            sample.put("kv_cache_usage", 0.1 + s / (double)seconds / 2);
            sample.put("generation_tokens_per_s", 800.0);
            series.add(s == 1 ? null : sample);
        }
        return series;
    }

    /**
     * @param model the target's model name.
     * @param points the runs; NaN levels when {@code sweep} is null.
     * @param sweep {@code concurrency} or {@code rate}, or null.
     * @return the report.
     */
    public static ObjectNode report(final String model, final List<LoadReport.Point> points, final String sweep)
    {
        final Map<String, Object> target = new LinkedHashMap<>();
        target.put("url", "http://127.0.0.1:8000");
        target.put("model", model);
        target.put("endpoint", "/v1/completions");
        target.put("stream", true);
        final Map<String, Object> options = new LinkedHashMap<>();
        options.put("url", "http://127.0.0.1:8000");
        options.put("model", model);
        return LoadReport.build(target, options, Slo.parse("ttft_ms=500"), sweep, points);
    }

    /**
     * @return one point, 10 s, with server metrics, 2 failures, the hostile model name.
     */
    public static ObjectNode single()
    {
        return report(HOSTILE_MODEL, List.of(new LoadReport.Point(run("run", 200, 10, 40, 16, 2), Double.NaN,
            server(10))), null);
    }

    /**
     * @return a concurrency sweep 1, 8, 64 where 64 is dominated by 8 (less throughput, higher p99 TTFT).
     */
    public static ObjectNode sweep()
    {
        return report("Qwen/Qwen3-8B", List.of(
            new LoadReport.Point(run("concurrency=1", 50, 5, 20, 16, 0), 1, null),
            new LoadReport.Point(run("concurrency=8", 400, 5, 80, 16, 0), 8, null),
            new LoadReport.Point(run("concurrency=64", 300, 5, 900, 16, 5), 64, null)), "concurrency");
    }
}
