package dev.tapedeck.record;

import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import org.agrona.concurrent.UnsafeBuffer;

import dev.tapedeck.protocol.enginecore.AddRequest;
import dev.tapedeck.protocol.enginecore.AddRequestDecoder;
import dev.tapedeck.protocol.enginecore.RequestType;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.RequestCapture;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceWriter;

/**
 * Builds the trace from decoded copies of the messages the tap relayed, in relay order (docs/record.md):
 * <ul>
 *   <li>ADD: arrival (ms since the capture started), concurrency = requests tracked + 1, prompt tokens, the prompt's
 *       block fingerprints, multimodal hashes; the request is tracked until it finishes.</li>
 *   <li>ABORT from the frontend: the requests are dropped (aborted requests are not recorded, as in vllm-vcr).</li>
 *   <li>Each output message: a step-stats line when it carries {@code scheduler_stats}; the step's running count
 *       ({@code num_running_reqs} of those stats, else the tracked count) and prefill tokens (prompt tokens of the
 *       tracked requests, not prefilled remotely, that get their first tokens in this message); per request output:
 *       the cached tokens from the first output that reports them, a chunk per output with tokens, and at the
 *       finish the record, written and flushed at once. An ABORT finish drops the request; a request named in
 *       {@code finished_requests} without having finished is dropped too.</li>
 * </ul>
 * Confined to one thread (the capture writer's); it never touches a socket.
 */
final class CaptureRecorder implements Closeable
{
    private static final System.Logger LOG = System.getLogger(CaptureRecorder.class.getName());
    private static final String[] FINISH_REASONS = {"stop", "length", "abort", "error", "repetition"};
    private static final int WIRE_ABORT = 2;
    private static final int LOGGED_PROBLEMS = 10;
    private static final byte[] ENGINE_CORE_DEAD = "ENGINE_CORE_DEAD".getBytes(StandardCharsets.US_ASCII);

    /** One request being captured. */
    private static final class Tracked
    {
        final RequestCapture capture;
        final int promptTokens;
        final boolean remotePrefill;
        boolean cachedSeen;

        Tracked(final RequestCapture capture, final int promptTokens, final boolean remotePrefill)
        {
            this.capture = capture;
            this.promptTokens = promptTokens;
            this.remotePrefill = remotePrefill;
        }
    }

    private final TraceWriter trace;
    private final StepStatsWriter stepStats;
    private final VllmLine line;
    private final int blockSize;
    private final boolean recordTokens;
    private final long startNs;
    private final Map<String, Tracked> tracked = new HashMap<>();
    private final AddRequestDecoder addDecoder = new AddRequestDecoder();
    private final AddRequest add = new AddRequest();
    private final OutputsDecoder outputs = new OutputsDecoder();
    private final MsgPackReader reader = new MsgPackReader();
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    private volatile long records;
    private volatile long dropped;
    private volatile long problems;
    private boolean writeFailed;

    /**
     * @param trace where records go (its meta line already written).
     * @param stepStats the step-stats sidecar, or null.
     * @param line the engine's vLLM line: where outputs report cached tokens, which finish reasons exist.
     * @param blockSize tokens per block of the {@code block_hashes} fingerprints.
     * @param recordTokens keep the output token ids.
     * @param startNs {@link System#nanoTime()} of the capture start (arrival and chunk times are relative to it).
     */
    CaptureRecorder(final TraceWriter trace, final StepStatsWriter stepStats, final VllmLine line,
        final int blockSize, final boolean recordTokens, final long startNs)
    {
        this.trace = trace;
        this.stepStats = stepStats;
        this.line = line;
        this.blockSize = blockSize;
        this.recordTokens = recordTokens;
        this.startNs = startNs;
        outputs.line(line);
    }

    /**
     * A message from the frontend to the engine.
     *
     * @param type its request type byte.
     * @param payload its payload frame (aux frames are not needed).
     * @param atNs when it reached the tap.
     */
    void onInput(final byte type, final byte[] payload, final long atNs)
    {
        if (RequestType.ADD == type)
        {
            onAdd(payload, atNs);
        }
        else if (RequestType.ABORT == type)
        {
            onAbort(payload);
        }
        // UTILITY and START_DP_WAVE are relayed only
    }

    private void onAdd(final byte[] payload, final long atNs)
    {
        view.wrap(payload);
        if (!addDecoder.decode(view, 0, payload.length, add))
        {
            problem("an ADD the tap cannot read" + (add.hasRequestId() ? " (request " + add.requestId() + ")" : "") +
                ": " + addDecoder.error() + "; it is relayed but not recorded");
            return;
        }
        final String requestId = add.requestId();
        final int[] prompt = add.promptTokenIds();
        final RequestCapture capture = new RequestCapture(ms(atNs), prompt.length, tracked.size() + 1L,
            recordTokens)
            .blockHashes(PromptBlockHashes.of(prompt, prompt.length, blockSize))
            .mmHashes(add.hasMultimodal ? MultimodalHashes.of(payload) : null);
        final Tracked previous = tracked.put(requestId, new Tracked(capture, prompt.length,
            isRemotePrefill(add.kvTransferParams())));
        if (null != previous)
        {
            problem("request id " + requestId + " was added again while in flight; the earlier one is dropped");
        }
    }

    private static boolean isRemotePrefill(final byte[] kvTransferParams)
    {
        if (null == kvTransferParams)
        {
            return false;
        }
        try
        {
            final JsonNode params = MsgPackTree.of(kvTransferParams);
            return params.path("do_remote_prefill").asBoolean(false);
        }
        catch (final IllegalArgumentException ex)
        {
            return false;
        }
    }

    private void onAbort(final byte[] payload)
    {
        view.wrap(payload);
        reader.wrap(view, 0, payload.length);
        final int count = reader.readArrayHeader();
        for (int i = 0; i < count && reader.ok(); i++)
        {
            final String id = reader.readString();
            if (null != id && null != tracked.remove(id))
            {
                dropped++;
            }
        }
        if (!reader.ok())
        {
            problem("an ABORT the tap cannot read: " + reader.errorMessage());
        }
    }

    /**
     * A message from the engine to the frontend.
     *
     * @param payload its first frame ({@code EngineCoreOutputs}).
     * @param atNs when it reached the tap.
     */
    void onOutput(final byte[] payload, final long atNs)
    {
        final boolean decoded;
        try
        {
            decoded = outputs.decode(payload);
        }
        catch (final IllegalArgumentException ex)
        {
            problem("an output message the tap cannot read: " + ex.getMessage());
            return;
        }
        if (!decoded)
        {
            if (Arrays.equals(ENGINE_CORE_DEAD, payload))
            {
                LOG.log(System.Logger.Level.WARNING, "the engine reported ENGINE_CORE_DEAD (relayed to the frontend)");
            }
            else
            {
                problem("an output message the tap cannot read: " + outputs.error());
            }
            return;
        }
        final double atMs = ms(atNs);
        final JsonNode stats = outputs.stats();
        int running = -1;
        if (null != stats)
        {
            running = SchedulerStatsNames.numRunningReqs(stats);
            writeStepStats(atMs, stats);
        }
        if (running < 0)
        {
            running = tracked.size();
        }
        final int prefillTokens = prefillTokens();
        for (int i = 0; i < outputs.count(); i++)
        {
            onRequestOutput(i, atMs, running, prefillTokens);
        }
        for (final String id : outputs.finished())
        {
            if (null != id && null != tracked.remove(id))
            {
                dropped++;
            }
        }
    }

    private int prefillTokens()
    {
        int prefill = 0;
        for (int i = 0; i < outputs.count(); i++)
        {
            final Tracked t = tracked.get(outputs.requestId(i));
            if (null != t && !t.remotePrefill && outputs.tokenCount(i) > 0 && !t.capture.hasFirstToken())
            {
                prefill += t.promptTokens;
            }
        }
        return prefill;
    }

    private void onRequestOutput(final int i, final double atMs, final int running, final int prefillTokens)
    {
        final String requestId = outputs.requestId(i);
        final Tracked t = null == requestId ? null : tracked.get(requestId);
        if (null == t)
        {
            return;
        }
        final int finish = outputs.finishReason(i);
        if (WIRE_ABORT == finish)
        {
            tracked.remove(requestId);
            dropped++;
            return;
        }
        if (!t.cachedSeen && OutputsDecoder.NO_CACHED != outputs.cachedTokens(i))
        {
            t.capture.cachedTokens(outputs.cachedTokens(i));
            t.cachedSeen = true;
        }
        final int tokens = outputs.tokenCount(i);
        if (tokens > 0)
        {
            t.capture.onChunk(atMs, tokens, running, prefillTokens);
            for (int k = 0; recordTokens && k < tokens; k++)
            {
                t.capture.onTokenId(outputs.token(i, k));
            }
        }
        if (OutputsDecoder.NO_FINISH != finish)
        {
            tracked.remove(requestId);
            write(t.capture.toRecord(finishReason(finish), atMs));
        }
    }

    private String finishReason(final int wire)
    {
        if (wire >= 0 && wire < FINISH_REASONS.length && wire <= line.maxFinishReason())
        {
            return FINISH_REASONS[wire];
        }
        problem("finish reason " + wire + " is not one vLLM " + line.label() + " defines; recorded as error");
        return "error";
    }

    private void write(final TraceRecord record)
    {
        if (writeFailed)
        {
            return;
        }
        try
        {
            trace.write(record);
            records++;
        }
        catch (final IOException ex)
        {
            writeFailed = true;
            LOG.log(System.Logger.Level.ERROR, "cannot write the trace; relaying goes on, nothing more is " +
                "recorded: " + ex.getMessage());
        }
    }

    private void writeStepStats(final double atMs, final JsonNode stats)
    {
        if (null == stepStats || writeFailed)
        {
            return;
        }
        try
        {
            stepStats.write(atMs, SchedulerStatsNames.named(stats));
        }
        catch (final IOException ex)
        {
            writeFailed = true;
            LOG.log(System.Logger.Level.ERROR, "cannot write the step stats; relaying goes on, nothing more is " +
                "recorded: " + ex.getMessage());
        }
    }

    /**
     * Make the step-stats lines written so far readable (records are flushed one by one already).
     */
    void flush()
    {
        if (null != stepStats && !writeFailed)
        {
            try
            {
                stepStats.flush();
            }
            catch (final IOException ex)
            {
                writeFailed = true;
                LOG.log(System.Logger.Level.ERROR, "cannot write the step stats: " + ex.getMessage());
            }
        }
    }

    private void problem(final String what)
    {
        problems++;
        if (problems <= LOGGED_PROBLEMS)
        {
            LOG.log(System.Logger.Level.WARNING, what + (LOGGED_PROBLEMS == problems ?
                " (further problems are counted, not logged)" : ""));
        }
    }

    private double ms(final long atNs)
    {
        return (atNs - startNs) / 1e6;
    }

    /** @return records written. */
    long records()
    {
        return records;
    }

    /** @return requests dropped because they were aborted. */
    long dropped()
    {
        return dropped;
    }

    /** @return messages the tap could not read (they were relayed all the same). */
    long problems()
    {
        return problems;
    }

    /** @return requests being captured. */
    int inFlight()
    {
        return tracked.size();
    }

    /**
     * Close the trace (the gzip trailer) and the sidecar. Requests still in flight are not recorded.
     *
     * @throws IOException if closing fails.
     */
    @Override
    public void close() throws IOException
    {
        try
        {
            trace.close();
        }
        finally
        {
            if (null != stepStats)
            {
                stepStats.close();
            }
        }
    }
}
