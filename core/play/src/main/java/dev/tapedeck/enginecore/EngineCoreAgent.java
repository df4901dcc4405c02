package dev.tapedeck.enginecore;

import dev.tapedeck.net.ZmqConnector;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZFrame;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.EngineTime;
import dev.tapedeck.engine.FinishReason;
import dev.tapedeck.engine.KvTransferParams;
import dev.tapedeck.engine.Request;
import dev.tapedeck.engine.SubmitResult;
import dev.tapedeck.fault.FaultSchedule;
import dev.tapedeck.kvevents.KvEventStager;
import dev.tapedeck.lora.LoraTable;
import dev.tapedeck.protocol.enginecore.AddRequest;
import dev.tapedeck.protocol.enginecore.AddRequestDecoder;
import dev.tapedeck.protocol.enginecore.Handshake;
import dev.tapedeck.protocol.enginecore.RequestType;
import dev.tapedeck.protocol.enginecore.UtilityCall;
import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.MsgPackValues;
import dev.tapedeck.protocol.msgpack.MsgPackWriter;

/**
 * One simulated vLLM engine core behind a real vLLM frontend: performs the engine's side of the handshake, then in
 * each duty cycle reads the frontend's ADD / ABORT / UTILITY messages, advances the {@link Engine}, and sends one
 * {@code EngineCoreOutputs} per step per client (through {@link OutputBatcher}).
 * <p>
 * An Agrona {@link Agent}: run it with an {@code AgentRunner}; it creates, uses and closes its JeroMQ sockets on that
 * runner's thread only (JeroMQ sockets are thread-confined). The handshake runs in {@link #onStart()} and blocks until
 * the frontend answers or the handshake timeout passes. Malformed frames are logged with the request id when it is
 * readable, counted, and answered with an error finish when the request can be named (on the client it came from
 * when its {@code client_index} is out of range); the engine keeps serving. {@link #stop()} cuts a handshake short.
 * <p>
 * The engine faults of a {@code --fault-schedule} run on the engine's clock from the end of the handshake: {@code die}
 * (the sockets close at once and the thread ends, as a crashed process), {@code dead} (vLLM's engine-dead path: the
 * {@code ENGINE_CORE_DEAD} sentinel on every output socket, then silence), {@code stall} (no input read, no step) and
 * the {@code kv-events} faults.
 */
public final class EngineCoreAgent implements Agent
{
    private static final System.Logger LOG = System.getLogger(EngineCoreAgent.class.getName());
    private static final int MESSAGES_PER_CYCLE = 256;
    /** vLLM's engine-dead sentinel: one frame of these 16 ASCII bytes on an output socket. */
    static final byte[] ENGINE_CORE_DEAD = "ENGINE_CORE_DEAD".getBytes(StandardCharsets.US_ASCII);
    private static final int HANDSHAKE_POLL_MS = 100;

    private final int engineIndex;
    private final PlayOptions options;
    private final NanoClock engineClock;
    private final EngineConfig config;
    private final AddRequestDecoder decoder = new AddRequestDecoder();
    private final AddRequest add = new AddRequest();
    private final UtilityCall utility = new UtilityCall();
    private final MsgPackWriter writer = new MsgPackWriter();
    private final MsgPackReader reader = new MsgPackReader();
    private final ExpandableDirectByteBuffer scratch = new ExpandableDirectByteBuffer(4096);
    private final UnsafeBuffer frameView = new UnsafeBuffer(new byte[0]);
    private final Map<String, PlayRequest> live = new HashMap<>();
    /** The adapters the frontend loaded ({@code add_lora}) or sent with requests. */
    private final LoraTable loras = new LoraTable(java.util.List.of());
    private final EngineSockets sockets;
    private ZMQ.Socket[] inputs;
    private ZMQ.Socket[] outputs;
    private ZMQ.Socket coordinator;
    private InputWait inputWait;
    /** Held open (and closed with the engine's sockets) for the DP coordinator's channel from the engines. */
    private ZMQ.Socket coordinatorOutput;
    private final ZmqConnector connector = new ZmqConnector(ZmqConnector.DEFAULT_STALL_NS);
    private OutputBatcher batcher;
    private UtilityHandler utilities;
    private EngineSleep sleep;
    private Engine engine;
    private volatile boolean draining;
    private volatile boolean ready;
    private volatile long malformedFrames;
    private volatile long requestsAdded;
    private volatile int inFlight;
    private volatile boolean stopRequested;
    private volatile boolean stopped;
    /** The client whose input socket the message being handled came from. */
    private int receivingClient;
    private final FaultSchedule.Event[] faults;
    private final boolean[] faultBegun;
    private final boolean[] faultEnded;
    private long faultsFromNs;
    private boolean stalled;
    /** The engine's time: the clock less the freezes (a stall fault, a sleep with mode=keep). */
    private final EngineTime time = new EngineTime();
    private boolean dead;
    private boolean died;

    /**
     * @param engineIndex this engine's index (its ZeroMQ identity, 2 bytes little endian).
     * @param options face settings.
     * @param config concluded engine configuration.
     * @param sharedContext the ZeroMQ context the process's engines share (closed by its owner), or null for one of
     *     this engine's own.
     */
    public EngineCoreAgent(final int engineIndex, final PlayOptions options, final EngineConfig config,
        final ZContext sharedContext)
    {
        this.sockets = new EngineSockets(sharedContext, connector);
        this.engineIndex = engineIndex;
        this.options = options;
        this.engineClock = options.engineClock();
        this.config = config;
        this.faults = options.faults().events().stream().filter(e -> e.hits(engineIndex))
            .toArray(FaultSchedule.Event[]::new);
        this.faultBegun = new boolean[faults.length];
        this.faultEnded = new boolean[faults.length];
        connector.cancelWhen(() -> stopRequested);
    }

    @Override
    public String roleName()
    {
        return "tapedeck-engine-" + engineIndex;
    }

    /**
     * @return true once the handshake completed.
     */
    public boolean isReady()
    {
        return ready;
    }

    /**
     * @return malformed input frames seen so far.
     */
    public long malformedFrames()
    {
        return malformedFrames;
    }

    /**
     * @return ADD requests accepted so far.
     */
    public long requestsAdded()
    {
        return requestsAdded;
    }

    /**
     * Cut a handshake under way short (it fails with "stopped"), so that a shutdown does not wait for the handshake
     * timeout. Safe from any thread.
     */
    public void stop()
    {
        stopRequested = true;
    }

    /**
     * @return true once the agent closed: shut down, failed, or died of a {@code die} fault (safe from any thread).
     */
    public boolean isStopped()
    {
        return stopped;
    }

    /**
     * Stop taking requests (new ones finish at once with ABORT); running ones continue. Safe from any thread.
     */
    public void beginDrain()
    {
        draining = true;
    }

    @Override
    public void onStart()
    {
        final long deadlineNs = System.nanoTime() + options.handshakeTimeoutNs();
        final byte[] identity = {(byte)engineIndex, (byte)(engineIndex >> 8)};
        final ZMQ.Socket handshake = sockets.open(SocketType.DEALER, s ->
        {
            s.setIdentity(identity);
            s.setLinger(5000);
        }, options.handshakeAddress(), deadlineNs);
        handshake.send(encode(Handshake::hello), 0);
        final byte[] initFrame = receiveBefore(handshake, deadlineNs);
        if (null == initFrame)
        {
            throw new IllegalStateException("engine " + engineIndex + ": no INIT from the frontend at " +
                options.handshakeAddress() + (stopRequested ? ": stopped" : " within the handshake timeout"));
        }
        final Handshake.Init init = Handshake.decodeInit(new UnsafeBuffer(initFrame), 0, initFrame.length);
        final int clients = init.inputs().size();
        inputs = new ZMQ.Socket[clients];
        outputs = new ZMQ.Socket[clients];
        final byte[] registration = encode(w -> Handshake.registration(w, new Handshake.Registration(
            config.maxModelLen(), config.kvCacheBlocks(), config.blockSize(), config.maxNumSeqs(),
            config.maxNumBatchedTokens(), engineIndex, options.engineCount(), options.line().version(),
            UUID.randomUUID().toString(), true, config.maxLoras())));
        for (int i = 0; i < clients; i++)
        {
            inputs[i] = sockets.open(SocketType.DEALER, s ->
            {
                s.setIdentity(identity);
                s.setHWM(0);
            }, tcpOnly(init.inputs().get(i)), deadlineNs);
            inputs[i].send(registration, 0);
            outputs[i] = sockets.open(SocketType.PUSH, s ->
            {
                s.setHWM(0);
                s.setLinger(4000);
            }, tcpOnly(init.outputs().get(i)), deadlineNs);
        }
        connectCoordinator(init, deadlineNs);
        inputWait = new InputWait(sockets.context(), java.util.stream.Stream.concat(java.util.Arrays.stream(inputs),
            java.util.stream.Stream.of(coordinator)).toArray(ZMQ.Socket[]::new));
        batcher = new OutputBatcher(engineIndex, options.line(), clients, this::send, live);
        engine = new Engine(config, batcher, engineNowNs());
        batcher.engine(engine);
        utilities = new UtilityHandler(() -> engine.resetPrefixCache(engineNowNs()), loras);
        sleep = new EngineSleep(engine, () -> engine.resetPrefixCache(engineNowNs()), this::replyUtility,
            this::freeze);
        handshake.send(encode(w -> Handshake.ready(w, config.kvCacheBlocks())), 0);
        sockets.close(handshake);
        faultsFromNs = engineClock.nanoTime();
        ready = true;
        LOG.log(System.Logger.Level.INFO, "engine {0} ready: {1} client(s), vLLM line {2}, {3}", engineIndex,
            clients, options.line().label(), config.latencyModel().describe());
    }

    private static String tcpOnly(final String address)
    {
        if (!address.startsWith("tcp://"))
        {
            throw new IllegalStateException("the frontend's INIT names " + address + ", which JeroMQ cannot reach " +
                "(it speaks ZeroMQ over TCP only): start the frontend with --data-parallel-size-local 0 so that it " +
                "listens on TCP");
        }
        return address;
    }

    private void connectCoordinator(final Handshake.Init init, final long deadlineNs)
    {
        if (null == init.coordinatorInput() && null == init.coordinatorOutput())
        {
            return;
        }
        if (null == init.coordinatorInput() || null == init.coordinatorOutput())
        {
            throw new IllegalStateException("INIT names only one of the coordinator addresses");
        }
        coordinator = sockets.open(SocketType.XSUB, s -> { }, tcpOnly(init.coordinatorInput()),
            deadlineNs);
        coordinator.send(new byte[] {1}, 0);
        coordinatorOutput = sockets.open(SocketType.PUSH, s -> s.setLinger(0),
            tcpOnly(init.coordinatorOutput()), deadlineNs);
        final byte[] first = receiveBefore(coordinator, deadlineNs);
        if (null == first || !"READY".equals(new String(first, StandardCharsets.US_ASCII)))
        {
            throw new IllegalStateException("the DP coordinator did not send READY");
        }
        coordinator.setReceiveTimeOut(0);
    }

    /** A frame received before the deadline, in short waits so that {@link #stop()} is heard; null if none came. */
    private byte[] receiveBefore(final ZMQ.Socket socket, final long deadlineNs)
    {
        socket.setReceiveTimeOut(HANDSHAKE_POLL_MS);
        while (!stopRequested && System.nanoTime() - deadlineNs < 0)
        {
            final byte[] frame = socket.recv(0);
            if (null != frame)
            {
                return frame;
            }
        }
        return null;
    }

    private byte[] encode(final java.util.function.ToIntFunction<MsgPackWriter> encoder)
    {
        final int length = encoder.applyAsInt(writer.wrap(scratch, 0));
        final byte[] bytes = new byte[length];
        scratch.getBytes(0, bytes);
        return bytes;
    }

    private void send(final int clientIndex, final byte[] message)
    {
        if (clientIndex >= 0 && clientIndex < outputs.length)
        {
            outputs[clientIndex].send(message, ZMQ.DONTWAIT);
        }
    }

    @Override
    public int doWork()
    {
        if (faults.length > 0)
        {
            runFaults();
        }
        if (stalled || dead)
        {
            return 0;
        }
        int work = 0;
        for (int client = 0; client < inputs.length; client++)
        {
            for (int i = 0; i < MESSAGES_PER_CYCLE; i++)
            {
                final ZMsg message = ZMsg.recvMsg(inputs[client], ZMQ.DONTWAIT);
                if (null == message)
                {
                    break;
                }
                receivingClient = client;
                handle(message);
                work++;
            }
        }
        if (null != coordinator)
        {
            // START_DP_WAVE and friends: waves only matter for MoE data parallelism, which is not simulated
            while (null != ZMsg.recvMsg(coordinator, ZMQ.DONTWAIT))
            {
                work++;
            }
        }
        sleep.poll();
        for (EngineSleep.HeldAdd add; null != (add = sleep.nextReleased()); work++)
        {
            receivingClient = add.receivedOn();
            frameView.wrap(add.payload());
            onAdd(add.payload());
        }
        if (!time.frozen())
        {
            work += engine.doWork(engineNowNs());
        }
        inFlight = engine.numRunning() + engine.numWaiting();
        if (0 == work)
        {
            final long dueNs = time.frozen() ? Long.MAX_VALUE : engine.nextDeadlineNs();
            inputWait.await(Long.MAX_VALUE == dueNs ? Long.MAX_VALUE : dueNs - engineNowNs());
        }
        return work;
    }

    private void handle(final ZMsg message)
    {
        final ZFrame typeFrame = message.pop();
        final ZFrame payload = message.pop();
        if (null == typeFrame || null == payload || 1 != typeFrame.size())
        {
            malformed(null, "a message without a type byte and a payload");
            return;
        }
        final byte[] bytes = payload.getData();
        frameView.wrap(bytes);
        switch (typeFrame.getData()[0])
        {
            case RequestType.ADD:
                if (!draining && sleep.holdsAdds())
                {
                    // admitted at the wake-up; the id is read now so that an ABORT can drop it
                    final String heldId = decoder.decode(frameView, 0, bytes.length, add) ? add.requestId() : null;
                    sleep.hold(new EngineSleep.HeldAdd(bytes, receivingClient, heldId));
                }
                else
                {
                    onAdd(bytes);
                }
                break;
            case RequestType.ABORT:
                onAbort(bytes);
                break;
            case RequestType.UTILITY:
                onUtility(bytes);
                break;
            case RequestType.START_DP_WAVE:
                break;
            default:
                malformed(null, "unknown request type " + typeFrame.getData()[0]);
        }
    }

    private void onAdd(final byte[] bytes)
    {
        final long nowNs = engineNowNs();
        if (!decoder.decode(frameView, 0, bytes.length, add))
        {
            final String requestId = add.requestId();
            malformed(requestId, decoder.error());
            if (null != requestId)
            {
                failImmediately(requestId, replyClient(add.clientIndex), FinishReason.ERROR, nowNs);
            }
            return;
        }
        final String requestId = add.requestId();
        if (live.containsKey(requestId))
        {
            malformed(requestId, "duplicate request id");
            return;
        }
        if (replyClient(add.clientIndex) != add.clientIndex)
        {
            malformed(requestId, "client_index " + add.clientIndex + " is out of range (the frontend has " +
                outputs.length + " client(s)); finished with an error on the client it came from, " + receivingClient);
            failImmediately(requestId, receivingClient, FinishReason.ERROR, nowNs);
            return;
        }
        final int negativeAt = firstNegative(add.promptTokenIds());
        if (negativeAt >= 0)
        {
            malformed(requestId, "prompt token " + negativeAt + " is negative; finished with an error");
            failImmediately(requestId, add.clientIndex, FinishReason.ERROR, nowNs);
            return;
        }
        if (add.isPooling || add.hasPromptEmbeds || 0 == add.promptLength())
        {
            LOG.log(System.Logger.Level.WARNING, "request {0}: pooling, prompt embeddings and empty prompts are " +
                "not simulated; finished with an error", requestId);
            failImmediately(requestId, add.clientIndex, FinishReason.ERROR, nowNs);
            return;
        }
        if (null != add.loraName && add.loraId < 1)
        {
            malformed(requestId, "lora_request " + add.loraName + " has lora_int_id " + add.loraId + " (must be >= 1)");
            failImmediately(requestId, add.clientIndex, FinishReason.ERROR, nowNs);
            return;
        }
        if (draining)
        {
            failImmediately(requestId, add.clientIndex, FinishReason.ABORT, nowNs);
            return;
        }
        submit(requestId, nowNs);
    }

    /** The client to answer: the given one, or the one the message came from when the given one is out of range. */
    private int replyClient(final int clientIndex)
    {
        return clientIndex >= 0 && clientIndex < outputs.length ? clientIndex : receivingClient;
    }

    private static int firstNegative(final int[] tokenIds)
    {
        for (int i = 0; i < tokenIds.length; i++)
        {
            if (tokenIds[i] < 0)
            {
                return i;
            }
        }
        return -1;
    }

    /** The request's {@code kv_transfer_params} as vLLM's NixlConnector reads them; malformed ones are ignored. */
    private KvTransferParams kvTransferParams(final String requestId)
    {
        final byte[] raw = add.kvTransferParams();
        if (null == raw)
        {
            return null;
        }
        try
        {
            final Object value = MsgPackValues.decode(raw);
            if (value instanceof java.util.Map)
            {
                return KvTransferParams.fromMap((java.util.Map<?, ?>)value);
            }
            LOG.log(System.Logger.Level.WARNING, "request {0}: kv_transfer_params is not a map; ignored", requestId);
        }
        catch (final IllegalArgumentException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "request {0}: kv_transfer_params ignored: {1}", requestId,
                ex.getMessage());
        }
        return null;
    }

    private void submit(final String requestId, final long nowNs)
    {
        final int[] prompt = add.promptTokenIds();
        // a frontend fills an unset max_tokens with the rest of the context: treat that as unset (natural length)
        final boolean unset = prompt.length + add.maxTokens >= config.maxModelLen();
        final Request request = new Request(requestId, prompt)
            .maxTokens(unset ? Request.UNSET : add.maxTokens)
            .minTokens(add.minTokens)
            .ignoreEos(add.ignoreEos)
            .stopTokenIds(add.stopTokenIds())
            .priority(add.priority)
            .cacheSalt(add.cacheSalt)
            .lora(null == add.loraName ? null : loras.resolve(add.loraId, add.loraName, null))
            .tokenPool(null == options.vocabulary() ? prompt : null)
            .arrivalNs(nowNs);
        if (add.hasSeed)
        {
            request.seed(add.seed);
        }
        if (AddRequest.ABSENT != add.eosTokenId)
        {
            request.eosTokenId(add.eosTokenId);
        }
        request.kvTransferParams(kvTransferParams(requestId));
        try
        {
            request.media(AddMedia.spans(add));
        }
        catch (final IllegalArgumentException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "request {0}: mm_features positions ignored (hashed as text): {1}",
                requestId, ex.getMessage());
        }
        final PlayRequest p = new PlayRequest(request, add.clientIndex);
        request.attachment(p);
        final SubmitResult result = engine.submit(request, nowNs);
        if (SubmitResult.ACCEPTED != result)
        {
            LOG.log(System.Logger.Level.WARNING, "request {0} refused by the engine: {1}", requestId, result);
            failImmediately(requestId, add.clientIndex,
                SubmitResult.TOO_LONG == result ? FinishReason.LENGTH : FinishReason.ERROR, nowNs);
            return;
        }
        live.put(requestId, p);
        requestsAdded++;
    }

    /**
     * End a request that never reached the engine: an output with no tokens and the finish reason.
     */
    private void failImmediately(final String requestId, final int clientIndex, final FinishReason reason,
        final long nowNs)
    {
        final Request request = new Request(requestId, new int[] {0}).arrivalNs(nowNs);
        final PlayRequest p = new PlayRequest(request, clientIndex);
        request.attachment(p);
        request.refuse(reason, nowNs);
        batcher.onFinished(request);
        batcher.onBatchEnd(nowNs);
    }

    private void onAbort(final byte[] bytes)
    {
        final long nowNs = engineNowNs();
        reader.wrap(frameView, 0, bytes.length);
        final int count = reader.readArrayHeader();
        for (int i = 0; i < count && reader.ok(); i++)
        {
            final String id = reader.readString();
            final PlayRequest p = null == id ? null : live.remove(id);
            if (null != p)
            {
                p.abortedByFrontend = true;
                engine.abort(p.request, FinishReason.ABORT, nowNs);
            }
            else if (null != id)
            {
                sleep.dropHeld(id); // aborted while held by a sleep: never admitted
            }
        }
        if (!reader.ok())
        {
            malformed(null, "ABORT payload: " + reader.errorMessage());
        }
        batcher.onBatchEnd(nowNs);
    }

    private void onUtility(final byte[] bytes)
    {
        if (!utility.decode(frameView, 0, bytes.length))
        {
            malformed(null, "UTILITY payload is not [client_index, call_id, method, args]");
            return;
        }
        final int client = replyClient(utility.clientIndex());
        if (client == utility.clientIndex() && EngineSleep.answers(utility.method()))
        {
            sleep.onUtility(utility, client, engineNowNs());
            return;
        }
        final UtilityHandler.Outcome outcome;
        if (client != utility.clientIndex())
        {
            malformed(null, "UTILITY " + utility.method() + ": client_index " + utility.clientIndex() + " is out of " +
                "range (the frontend has " + outputs.length + " client(s)); failed on the client it came from, " +
                client);
            outcome = new UtilityHandler.Outcome("Call to " + utility.method() + " method failed: client_index " +
                utility.clientIndex() + " is out of range", null);
        }
        else
        {
            outcome = utilities.handle(utility, 0 == engine.numRunning());
        }
        replyUtility(client, utility.callId(), outcome.failure(), outcome.result());
    }

    private void replyUtility(final int client, final long callId, final String failure,
        final UtilityCall.ResultWriter result)
    {
        final int length = UtilityCall.writeReply(writer.wrap(scratch, 0), engineIndex,
            engineNowNs() / 1e9, callId, failure, result);
        final byte[] reply = new byte[length];
        scratch.getBytes(0, reply);
        send(client, reply);
    }

    private void malformed(final String requestId, final String why)
    {
        malformedFrames++;
        LOG.log(System.Logger.Level.WARNING, "engine {0}: dropped a malformed frame{1}: {2}", engineIndex,
            null == requestId ? "" : " (request " + requestId + ")", why);
    }

    /**
     * Abort every request still in the engine (their clients get an ABORT finish). Call on the agent's thread, e.g.
     * from {@link #onClose()}.
     */
    private void abortAll()
    {
        if (null != engine)
        {
            engine.abortAll(engineNowNs());
        }
    }

    /**
     * @return requests running or waiting in the engine at the end of the last duty cycle (safe from any thread).
     */
    public int inFlight()
    {
        return inFlight;
    }

    private long engineNowNs()
    {
        return time.engineNs(engineClock.nanoTime());
    }

    /** Stop (true) or restart (false) the engine's time; freezes nest. */
    private void freeze(final boolean on)
    {
        time.freeze(on, engineClock.nanoTime());
    }

    private void runFaults()
    {
        final long nowNs = engineClock.nanoTime(); // the schedule runs on the clock, not on the engine's time
        for (int i = 0; i < faults.length; i++)
        {
            final FaultSchedule.Event event = faults[i];
            if (!faultBegun[i] && nowNs - (faultsFromNs + event.atNs()) >= 0)
            {
                faultBegun[i] = true;
                LOG.log(System.Logger.Level.WARNING, "engine {0}: fault schedule line {1}: {2}{3}", engineIndex,
                    event.line(), event.action().label(), Long.MAX_VALUE == event.forNs() ? "" :
                    " for " + dev.tapedeck.latency.Durations.format(event.forNs()));
                fault(event, true);
            }
            if (faultBegun[i] && !faultEnded[i] && Long.MAX_VALUE != event.endNs() &&
                nowNs - (faultsFromNs + event.endNs()) >= 0)
            {
                faultEnded[i] = true;
                LOG.log(System.Logger.Level.WARNING, "engine {0}: fault schedule line {1}: {2} over", engineIndex,
                    event.line(), event.action().label());
                fault(event, false);
            }
        }
    }

    private void fault(final FaultSchedule.Event event, final boolean begin)
    {
        switch (event.action())
        {
            case DIE:
                died = true;
                sockets.dropLinger();
                throw new AgentTerminationException("engine " + engineIndex + " died (fault schedule line " +
                    event.line() + ")");
            case DEAD:
                dead = true;
                for (final ZMQ.Socket output : outputs)
                {
                    output.send(ENGINE_CORE_DEAD, ZMQ.DONTWAIT);
                }
                break;
            case STALL:
                stalled = begin;
                freeze(begin);
                break;
            case KV_EVENTS_DROP:
            case KV_EVENTS_DELAY:
                if (config.kvEventSink() instanceof KvEventStager)
                {
                    ((KvEventStager)config.kvEventSink()).fault(begin && FaultSchedule.Action.KV_EVENTS_DROP ==
                        event.action(), begin ? event.delayNs() : 0);
                }
                break;
            default: // refused by PlayOptions
                break;
        }
    }

    @Override
    public void onClose()
    {
        if (!died) // a crashed process sends nothing more
        {
            abortAll();
            if (null != sleep)
            {
                for (final EngineSleep.HeldAdd held : sleep.drainHeld())
                {
                    if (null != held.requestId()) // held by a sleep: its client gets an ABORT finish too
                    {
                        failImmediately(held.requestId(), replyClient(held.receivedOn()), FinishReason.ABORT,
                            engineNowNs());
                    }
                }
            }
        }
        live.clear();
        if (null != inputWait)
        {
            inputWait.close();
        }
        sockets.close();
        stopped = true;
    }
}
