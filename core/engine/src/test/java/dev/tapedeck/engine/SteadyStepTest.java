package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.tapedeck.kv.KvEventSink;
import dev.tapedeck.kv.MediaSpans;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.latency.StepShape;
import dev.tapedeck.lora.LoraAdapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A steady decode batch is repeated instead of composed again ({@link Scheduler}): the engine must then do exactly
 * what it does when it composes every step from scratch. Each seed draws a workload (prompt lengths that put the
 * requests' block boundaries at different steps, shared prefixes, output lengths, arrivals in the middle of steady
 * stretches, aborts, stop requests from the sink, a pool small enough to preempt in some seeds, priorities) and runs
 * it twice on a manual clock, repeating and composing; every step's shape, token, finish and KV event must match.
 * Each mode adds what could change a batch between steps: first tokens held back, LoRA adapters beyond
 * {@code --max-loras}, the CPU offload connector, a driver that comes late (steps anchored in the past), decodes
 * whose prompt is pulled from a remote prefill engine (P/D), or several of them.
 */
class SteadyStepTest
{
    private static final int HELD = 1;
    private static final int LORA = 2;
    private static final int OFFLOAD = 4;
    private static final int LATE = 8;
    private static final int REMOTE = 16;
    private static final KvTransferParams PULL = KvTransferParams.fromMap(Map.of("do_remote_prefill", true,
        "remote_block_ids", List.of(7, 8, 9), "remote_engine_id", "p", "remote_request_id", "p-1",
        "remote_host", "127.0.0.1", "remote_port", 5600));
    private static final LoraAdapter SQL = new LoraAdapter("sql", 1, "/adapters/sql", null);
    private static final LoraAdapter CHAT = new LoraAdapter("chat", 2, "/adapters/chat", null);

    static Stream<Arguments> workloads()
    {
        return IntStream.of(0, HELD, LORA, OFFLOAD, LATE, REMOTE, HELD | LORA | OFFLOAD | LATE,
            HELD | LORA | LATE | REMOTE).boxed()
            .flatMap(mode -> IntStream.rangeClosed(1, 12).mapToObj(seed -> Arguments.of(mode, seed)));
    }

    @ParameterizedTest(name = "mode {0}, seed {1}")
    @MethodSource("workloads")
    void shouldDoExactlyWhatComposingEveryStepDoes(final int mode, final int seed)
    {
        final Run composed = run(seed, mode, false);
        final Run repeated = run(seed, mode, true);
        assertTrue(composed.steps.size() > 50, "the workload runs: " + composed.steps.size() + " steps");
        assertEquals(0, composed.repeatedSteps, "composing every step repeats none");
        assertTrue(repeated.repeatedSteps > 0, "some steps are steady and repeated");
        assertEquals(composed.steps, repeated.steps, "the steps' shapes");
        assertEquals(composed.tokens, repeated.tokens, "the tokens, their requests and times");
        assertEquals(composed.finishes, repeated.finishes, "the finishes");
        assertEquals(composed.kvEvents, repeated.kvEvents, "the KV events");
        assertEquals(composed.freeBlocks, repeated.freeBlocks, "the blocks left free");
    }

    @Test
    void shouldComposeARepeatedStepFromScratchWhenARequestCannotHaveItsBlock()
    {
        long fallbacks = 0;
        for (int seed = 1; seed <= 12; seed++)
        {
            fallbacks += run(seed, 0, true).steadyFallbacks;
        }
        assertTrue(fallbacks > 0, "the small pools run out in a steady stretch");
    }

    /** Everything the engine did in one run, as comparable strings. */
    private static final class Run
    {
        final List<String> steps = new ArrayList<>();
        final List<String> tokens = new ArrayList<>();
        final List<String> finishes = new ArrayList<>();
        final List<String> kvEvents = new ArrayList<>();
        long repeatedSteps;
        long steadyFallbacks;
        int freeBlocks;
    }

    private static Run run(final int seed, final int mode, final boolean repeat)
    {
        final SplittableRandom draw = new SplittableRandom(seed);
        final Run run = new Run();
        final boolean tightPool = 0 == seed % 3;
        final EngineConfig config = new EngineConfig()
            .latencyModel(new ContextModel(run.steps, 0 != (mode & HELD)))
            .blockSize(0 == seed % 2 ? 16 : 32)
            .kvCacheBlocks(tightPool ? 60 : 4096)
            .maxNumSeqs(24)
            .maxModelLen(512)
            .maxNumBatchedTokens(512)
            .schedulingPolicy(0 == seed % 4 ? SchedulingPolicy.PRIORITY : SchedulingPolicy.FCFS)
            .kvEventSink(new EventLog(run.kvEvents))
            .seed(seed);
        if (0 != (mode & LORA))
        {
            config.maxLoras(1);
        }
        if (0 != (mode & REMOTE))
        {
            config.kvConnector(new ModelledPulls());
        }
        if (0 != (mode & OFFLOAD))
        {
            config.kvOffload(new KvOffloadSettings(KvOffloadSettings.OFFLOADING_CONNECTOR, 0, 256, 0, 1024, 1024,
                16e9));
        }
        final EngineHarness h = new EngineHarness(config);
        h.engine.scheduler.repeatSteadySteps(repeat);
        final RecordingSink sink = h.sink;
        final int[] shared = EngineHarness.prompt("shared-" + seed, 64);
        final List<Request> submitted = new ArrayList<>();
        final int requests = 30;
        long arrivalNs = h.nowNs;
        int next = 0;
        while (true)
        {
            while (next < requests && arrivalNs <= h.nowNs)
            {
                final String id = "r" + next;
                final int promptLength = 5 + draw.nextInt(120);
                final int[] prompt = draw.nextBoolean() ? EngineHarness.prompt(id, promptLength) :
                    withPrefix(shared, promptLength, next);
                final Request request = new Request(id, prompt).maxTokens(20 + draw.nextInt(180))
                    .priority(draw.nextInt(3)).arrivalNs(h.nowNs);
                if (0 != (mode & REMOTE) && draw.nextBoolean())
                {
                    request.kvTransferParams(PULL);
                }
                if (0 != (mode & LORA))
                {
                    final int adapter = draw.nextInt(3);
                    request.lora(0 == adapter ? null : 1 == adapter ? SQL : CHAT);
                }
                assertEquals(SubmitResult.ACCEPTED, h.engine.submit(request, h.nowNs), id);
                if (0 == draw.nextInt(6))
                {
                    sink.stopAtOutputTokens.put(id, 1 + draw.nextInt(60));
                }
                submitted.add(request);
                next++;
                // a burst, then a steady stretch before the next arrivals
                arrivalNs = h.nowNs + (0 == draw.nextInt(4) ? 40 * EngineHarness.STEP_NS : 0);
            }
            if (0 == draw.nextInt(40) && !submitted.isEmpty())
            {
                h.engine.abort(submitted.get(draw.nextInt(submitted.size())), FinishReason.ABORT, h.nowNs);
            }
            final long deadlineNs = h.engine.nextDeadlineNs();
            if (Long.MAX_VALUE == deadlineNs && next == requests)
            {
                break;
            }
            h.nowNs = Math.max(h.nowNs, Math.min(deadlineNs, next < requests ? arrivalNs : Long.MAX_VALUE));
            if (0 != (mode & LATE) && Long.MAX_VALUE != deadlineNs)
            {
                h.nowNs += draw.nextInt(4) * EngineHarness.STEP_NS; // the driver comes up to three steps late
            }
            h.engine.doWork(h.nowNs);
            assertTrue(run.steps.size() < 100_000, "the workload ends");
        }
        for (final Request request : submitted)
        {
            run.tokens.add(request.requestId() + " " + sink.tokensOf(request) + " at " + sink.timesOf(request));
        }
        for (final Request request : sink.finished)
        {
            run.finishes.add(request.requestId() + " " + request.finishReason() + " after " +
                request.numOutputTokens() + " tokens, preempted " + request.preemptions());
        }
        run.repeatedSteps = h.engine.scheduler.repeatedSteps();
        run.steadyFallbacks = h.engine.scheduler.steadyFallbacks();
        run.freeBlocks = h.engine.kvBlockPool().freeBlocks();
        return run;
    }

    /** The shared prefix, then tokens of the request's own. */
    private static int[] withPrefix(final int[] shared, final int length, final int salt)
    {
        final int[] prompt = new int[Math.max(length, shared.length + 1)];
        System.arraycopy(shared, 0, prompt, 0, shared.length);
        for (int i = shared.length; i < prompt.length; i++)
        {
            prompt[i] = 500_000 + salt * 1000 + i;
        }
        return prompt;
    }

    /** Steps whose duration depends on their whole shape, each shape recorded; some first tokens held back. */
    private record ContextModel(List<String> steps, boolean holdsFirstTokens) implements LatencyModel
    {
        @Override
        public long stepDurationNs(final StepShape step, final SeededRandom random)
        {
            steps.add(step.decodeRequests() + " decodes, context " + step.decodeContextTokens() + ", prefill " +
                step.prefillRequests() + "/" + step.prefillTokens() + ", scheduled " + step.scheduledTokens() +
                ", running " + step.runningRequests());
            return EngineHarness.STEP_NS + step.decodeContextTokens() * 100 + step.prefillTokens() * 1000L;
        }

        @Override
        public long firstTokenDelayNs(final int promptTokens, final int cachedTokens, final int runningRequests,
            final SeededRandom random)
        {
            return holdsFirstTokens ? (promptTokens % 7) * 3 * EngineHarness.STEP_NS : 0;
        }

        @Override
        public long firstTokenOverheadNs(final int promptTokens, final int cachedTokens, final int runningRequests,
            final SeededRandom random)
        {
            return holdsFirstTokens && 0 == promptTokens % 2 ? (promptTokens % 5) * EngineHarness.STEP_NS : 0;
        }

        @Override
        public String describe()
        {
            return "context-dependent steps";
        }
    }

    /** Remote prefills (P/D): a decode's prompt is pulled in half a step per block, modelled, never failing. */
    private static final class ModelledPulls implements KvConnector
    {
        @Override
        public int remoteTokens(final Request request, final int localHitTokens)
        {
            return null != request.kvTransferParams() && request.kvTransferParams().doRemotePrefill() ?
                request.promptLength() - localHitTokens : 0;
        }

        @Override
        public long startLoad(final Request request, final int fromBlock, final int toBlock, final long nowNs)
        {
            return nowNs + (toBlock - fromBlock) * EngineHarness.STEP_NS / 2;
        }

        @Override
        public boolean requestFinished(final Request request, final long nowNs)
        {
            return false;
        }

        @Override
        public void poll(final Completions completions, final long nowNs)
        {
        }

        @Override
        public long nextDeadlineNs()
        {
            return Long.MAX_VALUE;
        }
    }

    /** The KV events, in order. */
    private record EventLog(List<String> events) implements KvEventSink
    {
        @Override
        public void blockStored(final long[] blockHashes, final int firstBlock, final int blockCount,
            final int[] tokenIds, final int blockSize, final int loraId, final byte[] loraNameUtf8,
            final byte[] cacheSaltUtf8, final MediaSpans media)
        {
            events.add("stored " + blockHashes[firstBlock] + " +" + blockCount);
        }

        @Override
        public void blockRemoved(final long blockHash)
        {
            events.add("removed " + blockHash);
        }

        @Override
        public void offloadedBlocksStored(final long[] blockHashes, final int blockCount, final int blockSize)
        {
            events.add("offloaded " + blockCount);
        }

        @Override
        public void offloadedBlockRemoved(final long blockHash)
        {
            events.add("offload removed " + blockHash);
        }

        @Override
        public void allBlocksCleared()
        {
            events.add("cleared");
        }

        @Override
        public void endOfStep(final long nowNs)
        {
            events.add("end of step " + nowNs);
        }
    }
}
