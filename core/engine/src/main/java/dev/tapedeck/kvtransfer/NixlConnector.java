package dev.tapedeck.kvtransfer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import dev.tapedeck.engine.FinishReason;
import dev.tapedeck.engine.KvConnector;
import dev.tapedeck.engine.KvTransferParams;
import dev.tapedeck.engine.Request;
import dev.tapedeck.metrics.NixlMetrics;
import dev.tapedeck.nixl.KvBlockPattern;
import dev.tapedeck.nixl.KvDataPlane;
import dev.tapedeck.nixl.KvPeer;
import dev.tapedeck.nixl.KvTransferException;
import dev.tapedeck.nixl.PullResult;
import dev.tapedeck.nixl.sidechannel.CompatibilityHash;
import dev.tapedeck.nixl.sidechannel.Handshake;
import dev.tapedeck.nixl.sidechannel.HandshakeCache;
import dev.tapedeck.nixl.sidechannel.SideChannelClient;

/**
 * vLLM's NixlConnector for one engine, over a {@link KvDataPlane}:
 * <ul>
 *   <li><b>Prefill</b> ({@code do_remote_decode}): a request that finishes length-capped (the proxy sends
 *       {@code max_tokens} 1) keeps its blocks, gets its pattern written into them (a real plane), and returns
 *       {@code do_remote_prefill:true} with its block ids, engine id, request id and side channel. The blocks are
 *       freed when the decode's notification {@code "<remote_request_id>:<world size>"} arrives, or after
 *       {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT} (counted in {@code vllm:nixl_num_kv_expired_reqs}).</li>
 *   <li><b>Decode</b> ({@code do_remote_prefill}): the prompt's full blocks beyond the local prefix hit are pulled (the
 *       prefill sends its full blocks only; the partial tail is computed here, as vLLM does), the last N remote blocks
 *       into the request's new blocks, after a side-channel handshake cached per remote engine id. A full prefix hit
 *       reads nothing but still notifies the prefill.
 *       A real plane reads the bytes (and verifies them with {@code --kv-verify}); {@code noop} models the time from
 *       the bytes. Then the notification is sent and the request decodes. A failed handshake or read fails the
 *       request or recomputes, as {@code kv_load_failure_policy} says ({@code vllm:nixl_num_failed_transfers}).
 *       Params missing a field are ignored with a warning and the prompt is computed here, as vLLM does.</li>
 * </ul>
 * <b>Threading</b>: the {@link KvConnector} methods run on the engine's thread. Handshakes and transfers complete on
 * I/O threads, which queue their outcome and call the wake-up ({@link #wakeUpWith}) so the engine's driver polls.
 */
public final class NixlConnector implements KvConnector, AutoCloseable
{
    /** The {@code NIXL_CONNECTOR_VERSION} tapedeck's handshake hash is computed with. */
    public static final int CONNECTOR_VERSION = 2;

    private static final System.Logger LOG = System.getLogger(NixlConnector.class.getName());

    private final KvTransferSettings settings;
    private final KvDataPlane plane;
    private final NixlEndpoint endpoint;
    private final int blockSize;
    private final long blockBytesReal;
    private final NixlMetrics metrics = new NixlMetrics();
    private final HandshakeCache handshakes;
    private final SideChannelClient client;
    private final Map<String, CompletableFuture<KvPeer>> peers = new ConcurrentHashMap<>();
    private final Queue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
    private final Queue<String> notifications = new ArrayDeque<>();
    private final Map<String, Held> held = new HashMap<>();
    private final ArrayDeque<Held> expiries = new ArrayDeque<>();
    private final PriorityQueue<Outcome> modelled = new PriorityQueue<>((a, b) -> Long.compare(a.dueNs, b.dueNs));
    private final Map<Request, Pull> pulls = new IdentityHashMap<>();
    private volatile Runnable wakeUp = () -> { };

    /**
     * @param settings the connector's settings (of this engine's rank).
     * @param endpoint this engine's data plane and side channel, started.
     * @param blockSize tokens per KV block.
     */
    public NixlConnector(final KvTransferSettings settings, final NixlEndpoint endpoint, final int blockSize)
    {
        this.settings = settings;
        this.endpoint = endpoint;
        this.plane = endpoint.plane();
        this.blockSize = blockSize;
        this.blockBytesReal = settings.kvBytesPerToken() * blockSize;
        this.client = new SideChannelClient(settings.handshakeTimeoutMs(),
            settings.enforceHandshakeCompat() ? endpoint.compatibilityHash() : null);
        this.handshakes = new HandshakeCache(client);
    }

    /**
     * Start the connector of one engine: its data plane, its side channel, and the client of its peers' side channels.
     *
     * @param settings the face's settings ({@link KvTransferSettings#forRank} is applied here).
     * @param engineIndex the engine's index in its process (its data-parallel rank).
     * @param numBlocks the engine's KV blocks.
     * @param blockSize tokens per block.
     * @param vllmVersion the vLLM version the face reports (part of the compatibility hash).
     * @param model the model name (part of the compatibility hash).
     * @return the connector; close it after its engine stopped.
     */
    public static NixlConnector start(final KvTransferSettings settings, final int engineIndex, final int numBlocks,
        final int blockSize, final String vllmVersion, final String model)
    {
        final KvTransferSettings rank = settings.forRank(engineIndex);
        final KvTransferSettings.ModelShape shape = rank.shape();
        final CompatibilityHash.Inputs compatibility = new CompatibilityHash.Inputs(vllmVersion,
            CONNECTOR_VERSION, model, shape.torchDtype(), shape.kvHeads(), shape.headSize(), shape.layers(),
            "FLASH_ATTN", "auto");
        return new NixlConnector(rank, NixlEndpoint.start(rank, numBlocks, blockSize, compatibility), blockSize);
    }

    /**
     * @param value run (on any thread) when an I/O thread has queued an outcome for {@link #poll}; the face's way to
     *     wake the engine's driver.
     */
    public void wakeUpWith(final Runnable value)
    {
        wakeUp = value;
        plane.notificationListener(value);
        endpoint.sideChannelNotificationListener(value);
    }

    /**
     * @return the {@code vllm:nixl_*} metrics (read on the engine's thread).
     */
    public NixlMetrics metrics()
    {
        return metrics;
    }

    /**
     * @return this engine's data plane and side channel.
     */
    public NixlEndpoint endpoint()
    {
        return endpoint;
    }

    /**
     * @return requests whose blocks this prefill keeps for a decode.
     */
    public int heldRequests()
    {
        return held.size();
    }

    @Override
    public int remoteTokens(final Request request, final int localHitTokens)
    {
        final KvTransferParams params = request.kvTransferParams();
        if (null == params || !params.doRemotePrefill() || !settings.isConsumer())
        {
            return 0;
        }
        if (!params.missingForPull().isEmpty())
        {
            LOG.log(System.Logger.Level.WARNING, "Got invalid KVTransferParams for request {0} (missing {1}); it " +
                "will not utilize KV transfer", request.requestId(), params.missingForPull());
            return 0;
        }
        // vLLM pulls whole blocks only (the prefill sends its full blocks; the decode computes the partial tail)
        final int fullTokens = request.promptLength() / blockSize * blockSize;
        final int count = Math.max(0, fullTokens - localHitTokens);
        if (0 == count && params.remoteBlockCount() > 0)
        {
            // a full prefix hit: nothing to read, but the prefill must still hear that its blocks can go
            notifyBySideChannel(new Pull(request, params, 0, 0));
        }
        return count;
    }

    @Override
    public long startLoad(final Request request, final int fromBlock, final int toBlock, final long nowNs)
    {
        final KvTransferParams params = request.kvTransferParams();
        final int wanted = toBlock - fromBlock;
        final Pull pull = new Pull(request, params, wanted, (long)wanted * blockSize);
        pulls.put(request, pull);
        if (params.remoteBlockCount() < wanted)
        {
            fail(pull, new KvTransferException("remote_block_ids has " + params.remoteBlockCount() +
                " block(s); " + wanted + " are needed"));
            return LOAD_ASYNC;
        }
        final int[] remote = new int[wanted];
        final int[] local = new int[wanted];
        for (int k = 0; k < wanted; k++)
        {
            remote[k] = params.remoteBlockId(params.remoteBlockCount() - wanted + k);
            local[k] = request.blockId(fromBlock + k);
        }
        final long[] seeds = settings.verify() && plane.movesBytes() ?
            KvBlockPattern.promptSeeds(request.promptTokenIds(), blockSize) : null;
        handshakes.get(params.remoteEngineId(), params.remoteHost(), params.remotePort())
            .thenApply(handshake -> checked(handshake, params))
            .thenCompose(handshake -> plane.movesBytes() ?
                peer(handshake).thenCompose(peer ->
                {
                    pull.readPosted = true;
                    return plane.read(peer, remote, local, pull.notification());
                }) :
                CompletableFuture.completedFuture((PullResult)null))
            .whenComplete((result, error) ->
            {
                if (null != error)
                {
                    fail(pull, error);
                    return;
                }
                if (null != seeds)
                {
                    try
                    {
                        verify(pull, local, fromBlock, seeds);
                    }
                    catch (final KvTransferException ex)
                    {
                        fail(pull, ex);
                        return;
                    }
                }
                outcomes.add(null == result ? Outcome.modelled(pull) : Outcome.read(pull, result));
                wakeUp.run();
            });
        return LOAD_ASYNC;
    }

    private Handshake checked(final Handshake handshake, final KvTransferParams params)
    {
        final long remoteBlockBytes = handshake.metadata().blockLens().isEmpty() ? -1 :
            handshake.metadata().blockLens().get(0);
        if (plane.movesBytes() && remoteBlockBytes != plane.pool().blockBytes())
        {
            throw new KvTransferException("engine " + params.remoteEngineId() + " has blocks of " + remoteBlockBytes +
                " bytes, this engine " + plane.pool().blockBytes() + " (same model, block size and --kv-byte-scale " +
                "are needed on both sides)");
        }
        if (!plane.kind().equals(handshake.metadata().plane()))
        {
            throw new KvTransferException("engine " + params.remoteEngineId() + " serves KV over the " +
                handshake.metadata().plane() + " data plane, this engine uses " + plane.kind());
        }
        return handshake;
    }

    private CompletableFuture<KvPeer> peer(final Handshake handshake)
    {
        final String engineId = handshake.metadata().engineId();
        return peers.computeIfAbsent(engineId, id -> plane.addPeer(id, handshake.metadata().agentMetadata())
            .whenComplete((peer, error) ->
            {
                if (null != error)
                {
                    peers.remove(id);
                }
            }));
    }

    private void verify(final Pull pull, final int[] local, final int fromBlock, final long[] seeds)
    {
        for (int k = 0; k < local.length; k++)
        {
            final int blockIndex = fromBlock + k;
            final int wrong = KvBlockPattern.firstMismatch(plane.pool().block(local[k]), seeds[blockIndex]);
            if (wrong >= 0)
            {
                throw new KvTransferException("KV block " + blockIndex + " of request " +
                    pull.params.remoteRequestId() + " from engine " + pull.params.remoteEngineId() +
                    " failed verification at byte " + wrong * Long.BYTES);
            }
        }
    }

    private void fail(final Pull pull, final Throwable error)
    {
        final Throwable cause = error instanceof java.util.concurrent.CompletionException && null != error.getCause() ?
            error.getCause() : error;
        outcomes.add(Outcome.failed(pull, cause));
        wakeUp.run();
    }

    @Override
    public boolean requestFinished(final Request request, final long nowNs)
    {
        final KvTransferParams params = request.kvTransferParams();
        if (null == params)
        {
            return false;
        }
        final Pull pull = pulls.remove(request);
        if (null != pull && !pull.readPosted && !pull.notified && !pull.failed)
        {
            // aborted (or failed) before its read: the notification still frees the prefill's blocks
            notifyBySideChannel(pull);
        }
        if (!params.doRemoteDecode() || !settings.isProducer() || FinishReason.LENGTH != request.finishReason())
        {
            return false;
        }
        // only the prompt's full blocks, as vLLM's request_finished sends them
        final int blocks = Math.min(request.numBlocks(), request.promptLength() / blockSize);
        final int[] blockIds = new int[blocks];
        for (int i = 0; i < blocks; i++)
        {
            blockIds[i] = request.blockId(i);
        }
        if (plane.movesBytes())
        {
            final long[] seeds = KvBlockPattern.promptSeeds(request.promptTokenIds(), blockSize);
            for (int i = 0; i < blocks; i++)
            {
                KvBlockPattern.fill(plane.pool().block(blockIds[i]), seeds[i]);
            }
        }
        request.kvTransferResult(KvTransferParams.forDecode(blockIds, endpoint.engineId(), request.requestId(),
            endpoint.sideChannelHost(), endpoint.sideChannelPort(), 1));
        if (0 == blocks)
        {
            return false; // a prompt shorter than a block: nothing to keep, as vLLM frees at once
        }
        final Held entry = new Held(request, nowNs + settings.abortTimeoutNs());
        final Held previous = held.put(request.requestId(), entry);
        if (null != previous)
        {
            LOG.log(System.Logger.Level.WARNING, "request id {0} is already waiting for a decode; its older blocks " +
                "are kept until they expire", request.requestId());
        }
        expiries.add(entry);
        return true;
    }

    @Override
    public void poll(final Completions completions, final long nowNs)
    {
        plane.drainNotifications(notifications::add);
        endpoint.drainSideChannelNotifications(notifications::add);
        String notification;
        while (null != (notification = notifications.poll()))
        {
            onNotification(notification, completions);
        }
        Outcome outcome;
        while (null != (outcome = outcomes.poll()))
        {
            onOutcome(outcome, completions, nowNs);
        }
        while (!modelled.isEmpty() && modelled.peek().dueNs <= nowNs)
        {
            final Outcome due = modelled.poll();
            metrics.onTransfer(due.transferNs, 0, due.pull.tokens * settings.kvBytesPerToken(), due.pull.blocks);
            if (!due.pull.notified)
            {
                notifyBySideChannel(due.pull);
            }
            completions.onLoaded(due.pull.request);
        }
        while (!expiries.isEmpty() && expiries.peek().expiryNs <= nowNs)
        {
            final Held expired = expiries.poll();
            if (held.remove(expired.request.requestId(), expired))
            {
                metrics.onKvExpired();
                LOG.log(System.Logger.Level.WARNING, "Releasing expired KV blocks for request {0} which were " +
                    "retrieved by 0 decode worker(s) within {1} seconds", expired.request.requestId(),
                    settings.abortTimeoutNs() / 1_000_000_000L);
                completions.onReleased(expired.request);
            }
        }
    }

    private void onOutcome(final Outcome outcome, final Completions completions, final long nowNs)
    {
        final Pull pull = outcome.pull;
        if (null != outcome.error)
        {
            if (outcome.notificationOnly)
            {
                metrics.onFailedNotification();
                LOG.log(System.Logger.Level.WARNING, "KV notification for request {0} to engine {1} failed: {2}",
                    pull.params.remoteRequestId(), pull.params.remoteEngineId(), outcome.error.getMessage());
                return;
            }
            metrics.onFailedTransfer();
            pull.failed = true;
            LOG.log(System.Logger.Level.WARNING, "KV transfer for request {0} from engine {1} failed ({2}); {3}",
                pull.request.requestId(), pull.params.remoteEngineId(), outcome.error.getMessage(),
                settings.recomputeOnFailure() ? "recomputing it" : "failing it (kv_load_failure_policy=fail)");
            completions.onLoadFailed(pull.request, settings.recomputeOnFailure());
            return;
        }
        if (null == outcome.result)
        {
            outcome.transferNs = settings.modelledTransferNs(pull.tokens);
            outcome.dueNs = nowNs + outcome.transferNs;
            modelled.add(outcome);
            return;
        }
        pull.notified = true;
        metrics.onTransfer(outcome.result.transferNanos(), outcome.result.postNanos(), outcome.result.bytes(),
            outcome.result.descriptors());
        completions.onLoaded(pull.request);
    }

    private void onNotification(final String notification, final Completions completions)
    {
        final int colon = notification.lastIndexOf(':');
        final String requestId = colon < 0 ? notification : notification.substring(0, colon);
        final Held entry = held.get(requestId);
        if (null == entry)
        {
            LOG.log(System.Logger.Level.DEBUG, "KV notification for unknown request {0} ignored", requestId);
            return;
        }
        int consumers = 1;
        try
        {
            consumers = colon < 0 ? 1 : Math.max(1, Integer.parseInt(notification.substring(colon + 1)));
        }
        catch (final NumberFormatException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "KV notification {0} has no world size; counted as one", notification);
        }
        if (++entry.notifications >= consumers)
        {
            held.remove(requestId);
            expiries.remove(entry);
            completions.onReleased(entry.request);
        }
    }

    private void notifyBySideChannel(final Pull pull)
    {
        pull.notified = true;
        client.notify(pull.params.remoteHost(), pull.params.remotePort(), new String(pull.notification(),
            StandardCharsets.UTF_8)).whenComplete((ignored, error) ->
            {
                if (null != error)
                {
                    outcomes.add(Outcome.failedNotification(pull, error));
                    wakeUp.run();
                }
            });
    }

    @Override
    public long nextDeadlineNs()
    {
        long next = Long.MAX_VALUE;
        if (!modelled.isEmpty())
        {
            next = modelled.peek().dueNs;
        }
        if (!expiries.isEmpty())
        {
            next = Math.min(next, expiries.peek().expiryNs);
        }
        return next;
    }

    /**
     * Stop the side-channel client, the side channel and the data plane; call it after the engine stopped.
     */
    @Override
    public void close()
    {
        client.close();
        endpoint.close();
    }

    /** A decode's pull of one request, engine-thread state apart from the volatile flag the I/O thread sets. */
    private static final class Pull
    {
        final Request request;
        final KvTransferParams params;
        final int blocks;
        final long tokens;
        volatile boolean readPosted;
        boolean notified;
        boolean failed;

        Pull(final Request request, final KvTransferParams params, final int blocks, final long tokens)
        {
            this.request = request;
            this.params = params;
            this.blocks = blocks;
            this.tokens = Math.max(0, tokens);
        }

        byte[] notification()
        {
            return (params.remoteRequestId() + ":1").getBytes(StandardCharsets.UTF_8);
        }
    }

    /** How a pull (or its notification) ended, handed from an I/O thread to the engine's. */
    private static final class Outcome
    {
        final Pull pull;
        final PullResult result;
        final Throwable error;
        final boolean notificationOnly;
        long transferNs;
        long dueNs;

        private Outcome(final Pull pull, final PullResult result, final Throwable error,
            final boolean notificationOnly)
        {
            this.pull = pull;
            this.result = result;
            this.error = error;
            this.notificationOnly = notificationOnly;
        }

        static Outcome read(final Pull pull, final PullResult result)
        {
            return new Outcome(pull, result, null, false);
        }

        static Outcome modelled(final Pull pull)
        {
            return new Outcome(pull, null, null, false);
        }

        static Outcome failed(final Pull pull, final Throwable error)
        {
            return new Outcome(pull, null, error, false);
        }

        static Outcome failedNotification(final Pull pull, final Throwable error)
        {
            return new Outcome(pull, null, error, true);
        }
    }

    /** A prefill's request whose blocks wait for the decode's notification. */
    private static final class Held
    {
        final Request request;
        final long expiryNs;
        int notifications;

        Held(final Request request, final long expiryNs)
        {
            this.request = request;
            this.expiryNs = expiryNs;
        }
    }
}
