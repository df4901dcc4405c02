package dev.tapedeck.enginecore;

import java.util.Arrays;
import java.util.Map;

import org.agrona.ExpandableArrayBuffer;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.FinishReason;
import dev.tapedeck.engine.OutputSink;
import dev.tapedeck.engine.Request;
import dev.tapedeck.metrics.EngineMetrics;
import dev.tapedeck.protocol.enginecore.EngineCoreOutputsEncoder;
import dev.tapedeck.protocol.enginecore.SchedulerStats;
import dev.tapedeck.protocol.enginecore.VllmLine;

/**
 * Turns engine outputs into {@code EngineCoreOutputs} messages: one per engine batch (step) per frontend client, not
 * one per request. Tokens and finishes are collected as the engine emits them and encoded at the end of the batch
 * into one reused buffer; requests the frontend aborted are reported in {@code finished_requests} only.
 * <p>
 * Confined to the engine's thread. Encoding allocates nothing; handing a message to JeroMQ needs one byte array
 * per message (JeroMQ keeps the array until its I/O thread has written it).
 */
final class OutputBatcher implements OutputSink
{
    /** Sends one encoded message to a client. */
    interface Sender
    {
        void send(int clientIndex, byte[] message);
    }

    private final int engineIndex;
    private final VllmLine line;
    private final Sender sender;
    private final EngineCoreOutputsEncoder encoder = new EngineCoreOutputsEncoder();
    private final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64 * 1024);
    private final SchedulerStats stats = new SchedulerStats();
    /** The engine's per-adapter request counts, as the stats encoder reads them. */
    private final SchedulerStats.LoraCounts loraCounts = new SchedulerStats.LoraCounts()
    {
        @Override
        public int adapters()
        {
            return engine.loraAdapterCount();
        }

        @Override
        public byte[] nameUtf8(final int adapter)
        {
            return engine.loraAdapter(adapter).nameUtf8();
        }

        @Override
        public int waiting(final int adapter)
        {
            return engine.loraRequests(adapter, false);
        }

        @Override
        public int running(final int adapter)
        {
            return engine.loraRequests(adapter, true);
        }
    };
    private long reportedPrefixRequests;
    private long reportedPrefixQueries;
    private long reportedPrefixHits;
    private long reportedSpecDrafts;
    private long reportedSpecDraftTokens;
    private long reportedSpecAcceptedTokens;
    private long[] reportedSpecPerPos = new long[0];
    private final PlayRequest[][] touched;
    private final int[] touchedCount;
    private final byte[][][] finishedIds;
    private final int[] finishedCount;
    private final Map<String, PlayRequest> live;
    private Engine engine;
    private long messages;

    OutputBatcher(final int engineIndex, final VllmLine line, final int clients, final Sender sender,
        final Map<String, PlayRequest> live)
    {
        this.live = live;
        this.engineIndex = engineIndex;
        this.line = line;
        this.sender = sender;
        touched = new PlayRequest[clients][64];
        touchedCount = new int[clients];
        finishedIds = new byte[clients][16][];
        finishedCount = new int[clients];
    }

    void engine(final Engine value)
    {
        engine = value;
    }

    long messages()
    {
        return messages;
    }

    @Override
    public boolean onToken(final Request request, final int tokenId)
    {
        final PlayRequest p = (PlayRequest)request.attachment();
        p.addToken(tokenId);
        touch(p);
        return false; // the frontend applies stop strings (its detokenizer), as with a real engine core
    }

    @Override
    public void onFinished(final Request request)
    {
        final PlayRequest p = (PlayRequest)request.attachment();
        live.remove(request.requestId());
        p.finished = true;
        if (p.abortedByFrontend)
        {
            final int client = p.clientIndex;
            if (finishedCount[client] == finishedIds[client].length)
            {
                finishedIds[client] = Arrays.copyOf(finishedIds[client], finishedCount[client] * 2);
            }
            finishedIds[client][finishedCount[client]++] = p.idUtf8;
        }
        else
        {
            touch(p);
        }
    }

    private void touch(final PlayRequest p)
    {
        if (p.touched)
        {
            return;
        }
        p.touched = true;
        final int client = p.clientIndex;
        if (touchedCount[client] == touched[client].length)
        {
            touched[client] = Arrays.copyOf(touched[client], touchedCount[client] * 2);
        }
        touched[client][touchedCount[client]++] = p;
    }

    @Override
    public boolean batchPerStep()
    {
        return true; // vLLM sends one EngineCoreOutputs per step; its frontend times tokens by message timestamps
    }

    @Override
    public void onBatchEnd(final long nowNs)
    {
        for (int client = 0; client < touched.length; client++)
        {
            if (touchedCount[client] > 0 || finishedCount[client] > 0)
            {
                flushClient(client, nowNs);
            }
        }
    }

    private void flushClient(final int client, final long nowNs)
    {
        encoder.begin(buffer, line, engineIndex);
        final PlayRequest[] batch = touched[client];
        for (int i = 0; i < touchedCount[client]; i++)
        {
            final PlayRequest p = batch[i];
            batch[i] = null;
            final boolean reportCached = !p.cachedReported && p.batchTokenCount > 0;
            p.cachedReported |= reportCached;
            if (reportCached || p.finished)
            {
                // the request's first output or its last: what the engine knows of it goes with it
                final Request r = p.request;
                encoder.output(p.idUtf8, p.batchTokens, 0, p.batchTokenCount, wireFinishReason(r), stopReason(r),
                    r.isFinished() && null != r.kvTransferResult() ? r.kvTransferResult().toMsgPack() : null,
                    r.promptLength(), reportCached ? r.numCachedTokens() : EngineCoreOutputsEncoder.NONE,
                    r.numExternalTokens());
            }
            else
            {
                // new tokens of a running request: its id and tokens only, the id's bytes encoded once (the Request is
                // not read, one cache miss less per request and step)
                encoder.runningOutput(p.outputHead, p.batchTokens, 0, p.batchTokenCount);
            }
            p.batchTokenCount = 0;
            p.touched = false;
        }
        touchedCount[client] = 0;
        fillStats();
        final int length = encoder.end(stats, nowNs / 1e9, finishedIds[client], finishedCount[client]);
        Arrays.fill(finishedIds[client], 0, finishedCount[client], null);
        finishedCount[client] = 0;
        final byte[] message = Arrays.copyOf(buffer.byteArray(), length);
        sender.send(client, message);
        messages++;
    }

    private void fillStats()
    {
        stats.numRunningReqs = engine.numRunning();
        stats.numWaitingReqs = engine.numWaiting();
        stats.stepCounter = engine.stepCount();
        stats.kvCacheUsage = engine.kvCacheUsage();
        stats.numSkippedWaitingReqs = engine.numWaitingDeferred();
        stats.loraCounts = 0 == engine.loraAdapterCount() ? null : loraCounts;
        final EngineMetrics metrics = engine.metrics();
        stats.prefixCacheRequests = metrics.prefixCacheRequests() - reportedPrefixRequests;
        stats.prefixCacheQueries = metrics.prefixCacheQueries() - reportedPrefixQueries;
        stats.prefixCacheHits = metrics.prefixCacheHits() - reportedPrefixHits;
        reportedPrefixRequests = metrics.prefixCacheRequests();
        reportedPrefixQueries = metrics.prefixCacheQueries();
        reportedPrefixHits = metrics.prefixCacheHits();
        fillSpecStats(metrics);
    }

    /** vLLM's {@code SpecDecodingStats} of the steps since the last report; none when nothing was drafted. */
    private void fillSpecStats(final EngineMetrics metrics)
    {
        final int k = metrics.numSpeculativeTokens();
        stats.numSpecTokens = 0;
        if (0 == k || metrics.specDrafts() == reportedSpecDrafts)
        {
            return;
        }
        if (reportedSpecPerPos.length != k)
        {
            reportedSpecPerPos = new long[k];
            stats.specNumAcceptedTokensPerPos = new long[k];
        }
        stats.numSpecTokens = k;
        stats.specNumDrafts = metrics.specDrafts() - reportedSpecDrafts;
        stats.specNumDraftTokens = metrics.specDraftTokens() - reportedSpecDraftTokens;
        stats.specNumAcceptedTokens = metrics.specAcceptedTokens() - reportedSpecAcceptedTokens;
        reportedSpecDrafts = metrics.specDrafts();
        reportedSpecDraftTokens = metrics.specDraftTokens();
        reportedSpecAcceptedTokens = metrics.specAcceptedTokens();
        for (int i = 0; i < k; i++)
        {
            final long total = metrics.specAcceptedTokensAt(i);
            stats.specNumAcceptedTokensPerPos[i] = total - reportedSpecPerPos[i];
            reportedSpecPerPos[i] = total;
        }
    }

    /**
     * @return the wire FinishReason of a finished request, or NO_FINISH; ERROR maps to ABORT on lines that do not
     * know ERROR.
     */
    int wireFinishReason(final Request r)
    {
        final FinishReason reason = r.finishReason();
        if (null == reason)
        {
            return EngineCoreOutputsEncoder.NO_FINISH;
        }
        switch (reason)
        {
            case STOP:
                return 0;
            case LENGTH:
                return 1;
            case ABORT:
                return 2;
            default:
                return line.maxFinishReason() >= 3 ? 3 : 2;
        }
    }

    private static int stopReason(final Request r)
    {
        return FinishReason.STOP == r.finishReason() && !r.lastTokenIsEos() && r.isStopToken(r.lastTokenId()) ?
            r.lastTokenId() : EngineCoreOutputsEncoder.NONE;
    }
}
