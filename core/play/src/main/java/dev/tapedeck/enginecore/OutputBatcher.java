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
 * one per request. A request's output is encoded as soon as it is complete: the engine emits a request's tokens
 * (and its finish) one after another, so its entry is written when the next request's first token (or the batch's
 * end) arrives, while the request is still in the cache, into its client's message buffer; requests the frontend
 * aborted are reported in {@code finished_requests} only. At the end of the batch each client's message is finished
 * and sent.
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
    /** Each client's message of the current batch: its encoder, its buffer, whether it was begun. */
    private final EngineCoreOutputsEncoder[] encoders;
    private final ExpandableArrayBuffer[] buffers;
    private final boolean[] begun;
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
    /** The request whose output is being collected (its tokens so far), or null. */
    private PlayRequest entry;
    private int[] entryTokens = new int[8];
    private int entryTokenCount;
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
        encoders = new EngineCoreOutputsEncoder[clients];
        buffers = new ExpandableArrayBuffer[clients];
        begun = new boolean[clients];
        for (int client = 0; client < clients; client++)
        {
            encoders[client] = new EngineCoreOutputsEncoder();
            buffers[client] = new ExpandableArrayBuffer(64 * 1024);
        }
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
        collect((PlayRequest)request.attachment());
        if (entryTokenCount == entryTokens.length)
        {
            entryTokens = Arrays.copyOf(entryTokens, entryTokenCount * 2);
        }
        entryTokens[entryTokenCount++] = tokenId;
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
            collect(p); // one that ended without a token of this batch (an abort, an error) gets an output of its own
            writeEntry(); // nothing follows a finish
        }
    }

    /** Collect {@code p}'s output from here on, first writing the entry of the request collected before, if another. */
    private void collect(final PlayRequest p)
    {
        if (p != entry)
        {
            writeEntry();
            entry = p;
        }
    }

    /**
     * Encode the collected request's output into its client's message: the request's first output or its last
     * carries what the engine knows of it; new tokens of a running request only its id and tokens (the engine's
     * {@code Request} is not read, one cache miss less per request and step).
     */
    private void writeEntry()
    {
        final PlayRequest p = entry;
        if (null == p)
        {
            return;
        }
        entry = null;
        final int tokens = entryTokenCount;
        entryTokenCount = 0;
        final EngineCoreOutputsEncoder encoder = encoder(p.clientIndex);
        final boolean reportCached = !p.cachedReported && tokens > 0;
        if (reportCached || p.finished)
        {
            p.cachedReported |= reportCached;
            final Request r = p.request;
            encoder.output(p.idUtf8, entryTokens, 0, tokens, wireFinishReason(r), stopReason(r),
                r.isFinished() && null != r.kvTransferResult() ? r.kvTransferResult().toMsgPack() : null,
                r.promptLength(), reportCached ? r.numCachedTokens() : EngineCoreOutputsEncoder.NONE,
                r.numExternalTokens());
        }
        else
        {
            encoder.runningOutput(p.outputHead, entryTokens, 0, tokens);
        }
    }

    /** @return the client's encoder, its message begun. */
    private EngineCoreOutputsEncoder encoder(final int client)
    {
        final EngineCoreOutputsEncoder encoder = encoders[client];
        if (!begun[client])
        {
            begun[client] = true;
            encoder.begin(buffers[client], line, engineIndex);
        }
        return encoder;
    }

    @Override
    public boolean batchPerStep()
    {
        return true; // vLLM sends one EngineCoreOutputs per step; its frontend times tokens by message timestamps
    }

    @Override
    public void onBatchEnd(final long nowNs)
    {
        writeEntry();
        for (int client = 0; client < encoders.length; client++)
        {
            if (begun[client] || finishedCount[client] > 0)
            {
                flushClient(client, nowNs);
            }
        }
    }

    private void flushClient(final int client, final long nowNs)
    {
        final EngineCoreOutputsEncoder encoder = encoder(client);
        begun[client] = false;
        fillStats();
        final int length = encoder.end(stats, nowNs / 1e9, finishedIds[client], finishedCount[client]);
        Arrays.fill(finishedIds[client], 0, finishedCount[client], null);
        finishedCount[client] = 0;
        final byte[] message = Arrays.copyOf(buffers[client].byteArray(), length);
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
