package dev.tapedeck.capture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.OutputSink;
import dev.tapedeck.engine.Request;
import dev.tapedeck.engine.VirtualTimeDriver;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.latency.StepShape;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceWriter;
import dev.tapedeck.trace.tools.DemoTraceGenerator;

/**
 * {@code inspect gen-demo}: the workload of {@link DemoTraceGenerator} run through the real {@link Engine} in
 * virtual time ({@link VirtualTimeDriver}) and captured as {@code serve --trace-out} captures
 * ({@link CaptureObserver}), so the demo trace is timed by the same scheduler, KV cache and prefix cache as every
 * other face.
 * <ul>
 *   <li>Engine: {@value DemoTraceGenerator#MAX_NUM_SEQS} sequences, {@value DemoTraceGenerator#MAX_NUM_BATCHED_TOKENS}
 *       batched tokens, blocks of {@value DemoTraceGenerator#BLOCK_SIZE} with prefix caching, context
 *       {@value DemoTraceGenerator#MAX_MODEL_LEN}, the step model {@link StepCoefficients#DENSE_8B_RTXPRO6000};
 *       step durations are cut to whole microseconds, so every time in the trace is exact to the microsecond.</li>
 *   <li>Output lengths: each request has the workload's {@code max_tokens}, {@code min_tokens} equal to its
 *       target length and one stop token id that is also the only token it samples; the engine ends it with
 *       {@code length} at {@code max_tokens} (the length check comes first), otherwise with {@code stop} at exactly
 *       {@code min_tokens}.</li>
 *   <li>Records are written in finish order as they finish; {@code concurrency} is the requests running or waiting
 *       in the engine when one arrived, this one included.</li>
 * </ul>
 * Stateless; every run builds its own engine on the caller's thread.
 */
public final class DemoTraceRun
{
    private static final int STOP_TOKEN_ID = 2;
    private static final int[] STOP_TOKEN = {STOP_TOKEN_ID};

    private DemoTraceRun()
    {
    }

    /**
     * Generate a trace file.
     *
     * @param options what to generate.
     * @param out the file (gzip when it ends with {@code .gz}).
     * @return what was generated.
     * @throws IOException if the file cannot be written.
     */
    public static DemoTraceGenerator.Result write(final DemoTraceGenerator.Options options, final Path out)
        throws IOException
    {
        final List<DemoTraceGenerator.DemoRequest> workload = DemoTraceGenerator.requests(options);
        final List<Request> requests = new ArrayList<>(workload.size());
        for (int i = 0; i < workload.size(); i++)
        {
            final DemoTraceGenerator.DemoRequest demo = workload.get(i);
            requests.add(new Request("demo-" + i, demo.promptTokenIds())
                .arrivalNs(Math.round(demo.arrivalMs() * 1_000_000.0))
                .maxTokens(demo.maxTokens())
                .minTokens(demo.outputTokens())
                .stopTokenIds(STOP_TOKEN)
                .tokenPool(STOP_TOKEN));
        }
        try (TraceWriter writer = TraceWriter.open(out, DemoTraceGenerator.meta(options)))
        {
            final Totals totals = new Totals(writer);
            final EngineConfig config = new EngineConfig()
                .maxNumSeqs(DemoTraceGenerator.MAX_NUM_SEQS)
                .maxNumBatchedTokens(DemoTraceGenerator.MAX_NUM_BATCHED_TOKENS)
                .blockSize(DemoTraceGenerator.BLOCK_SIZE)
                .enablePrefixCaching(true)
                .maxModelLen(DemoTraceGenerator.MAX_MODEL_LEN)
                .maxWaitingQueueLength(Math.max(options.records(), EngineConfig.DEFAULT_MAX_WAITING_QUEUE_LENGTH))
                .latencyModel(new WholeMicroseconds(new StepLatencyModel(StepCoefficients.DENSE_8B_RTXPRO6000)))
                .seed(SeededRandom.mix(options.seed(), 0x656e67))
                .tokenSpace(STOP_TOKEN, STOP_TOKEN_ID)
                .requestObserver(new CaptureObserver(0, false, DemoTraceGenerator.BLOCK_SIZE, totals::write))
                .conclude();
            final int refused = VirtualTimeDriver.run(new Engine(config, OutputSink.DISCARD, 0), requests);
            if (0 != refused || totals.records != requests.size())
            {
                throw new IllegalStateException("the engine ran " + totals.records + " of " + requests.size() +
                    " demo requests (" + refused + " refused)");
            }
            return new DemoTraceGenerator.Result(totals.records, totals.lastEndMs, totals.peakConcurrency,
                totals.outputTokens);
        }
        catch (final UncheckedIOException ex)
        {
            throw ex.getCause();
        }
    }

    /**
     * Writes each finished record (times rounded to the microsecond) and keeps the totals.
     */
    private static final class Totals
    {
        private final TraceWriter writer;
        int records;
        double lastEndMs;
        long peakConcurrency;
        long outputTokens;

        Totals(final TraceWriter writer)
        {
            this.writer = writer;
        }

        void write(final TraceRecord record)
        {
            double endMs = record.arrivalMs() + record.ttftMs();
            record.arrivalMs(DemoTraceGenerator.roundMs(record.arrivalMs()))
                .ttftMs(DemoTraceGenerator.roundMs(record.ttftMs()))
                .e2eMs(DemoTraceGenerator.roundMs(record.e2eMs()));
            final double[] gaps = record.itlMs();
            for (int g = 0; g < gaps.length; g++)
            {
                endMs += gaps[g];
                gaps[g] = DemoTraceGenerator.roundMs(gaps[g]);
            }
            records++;
            lastEndMs = DemoTraceGenerator.roundMs(endMs);
            peakConcurrency = Math.max(peakConcurrency, record.concurrency());
            outputTokens += record.outputTokens();
            try
            {
                writer.write(record, false);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        }
    }

    /**
     * A latency model whose steps last whole microseconds, so times rounded to the microsecond add up exactly.
     */
    private static final class WholeMicroseconds implements LatencyModel
    {
        private final LatencyModel model;

        WholeMicroseconds(final LatencyModel model)
        {
            this.model = model;
        }

        @Override
        public long stepDurationNs(final StepShape step, final SeededRandom random)
        {
            return Math.round(model.stepDurationNs(step, random) / 1000.0) * 1000L;
        }

        @Override
        public long firstTokenDelayNs(final int promptTokens, final int cachedTokens, final int runningRequests,
            final SeededRandom random)
        {
            return model.firstTokenDelayNs(promptTokens, cachedTokens, runningRequests, random);
        }

        @Override
        public long firstTokenOverheadNs(final int promptTokens, final int cachedTokens, final int runningRequests,
            final SeededRandom random)
        {
            return model.firstTokenOverheadNs(promptTokens, cachedTokens, runningRequests, random);
        }

        @Override
        public String describe()
        {
            return model.describe() + ", steps in whole microseconds";
        }
    }
}
