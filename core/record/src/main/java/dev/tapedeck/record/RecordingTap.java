package dev.tapedeck.record;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.OneToOneConcurrentArrayQueue;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import dev.tapedeck.build.JvmAccess;
import dev.tapedeck.net.ZmqContexts;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.trace.ConfigFingerprint;
import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceWriter;

/**
 * {@code tapedeck record}: a recording tap between a real vLLM frontend and a real vLLM engine core (docs/record.md).
 * It plays the frontend to the engine ({@link EngineSide}) and engine 0 to the frontend ({@link FrontendSide}),
 * relays every frame of every message byte for byte in both directions, and records one trace record per finished
 * request from decoded copies ({@link CaptureRecorder}).
 * <p>
 * Threads:
 * <ul>
 *   <li>the <b>relay</b>, an Agrona agent ({@link Relay}) on its own {@code AgentRunner} thread, owns the ZeroMQ
 *       context and every socket (JeroMQ sockets are thread-confined): in {@code onStart} it binds, performs both
 *       handshakes, opens the trace and writes its meta line; each duty cycle waits up to 20 ms on one
 *       {@link ZMQ.Poller} over the frontend's input and the engine's output (so a message is relayed the moment it
 *       arrives, with no idle strategy's sleep in between), forwards each message first and only then queues an
 *       {@link Observation} (the payload frame and the time it arrived on the context's clock). It never decodes,
 *       writes a file or waits for the writer: when the queue is full it keeps observations in its own backlog and
 *       goes on relaying;</li>
 *   <li>the <b>capture writer</b> ({@link CaptureAgent} on an Agrona {@code AgentRunner}) drains the queue into the
 *       {@link CaptureRecorder}, which decodes, builds records and writes the trace and sidecar;</li>
 *   <li>any thread may call {@link #stop()} (the CLI's shutdown hook does): the relay thread stops relaying, closes
 *       the sockets, hands the writer everything it observed, and the writer closes the files (gzip trailers).</li>
 * </ul>
 * The queue is single-producer single-consumer, the only state the two threads share besides volatile counters.
 */
public final class RecordingTap
{
    /** Thrown inside the relay thread when a stop request ends a wait. */
    static final class Stopped extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        Stopped()
        {
            super("stopped", null, false, false);
        }
    }

    private static final System.Logger LOG = System.getLogger(RecordingTap.class.getName());
    private static final int POLL_MS = 20;
    private static final int MESSAGES_PER_PASS = 256;
    private static final int QUEUE_CAPACITY = 1 << 16;
    private static final long WRITER_HANDOVER_NS = TimeUnit.SECONDS.toNanos(10);

    private final RecordContext options;
    private final NanoClock clock;
    private final AgentRunner relayRunner;
    private final CountDownLatch bound = new CountDownLatch(1);
    private final CountDownLatch relaying = new CountDownLatch(1);
    private final CountDownLatch ended = new CountDownLatch(1);
    private final OneToOneConcurrentArrayQueue<Observation> queue = new OneToOneConcurrentArrayQueue<>(QUEUE_CAPACITY);
    private final ArrayDeque<Observation> backlog = new ArrayDeque<>();
    private volatile boolean running = true;
    private volatile Throwable failure;
    private volatile String engineHandshakeEndpoint;
    private volatile String inputEndpoint;
    private volatile String outputEndpoint;
    private volatile TraceMeta meta;
    private volatile CaptureAgent captureAgent;
    private volatile long messagesToEngine;
    private volatile long messagesToFrontend;
    private volatile long sendFailures;
    private AgentRunner writerRunner;
    private final List<Closeable> unowned = new ArrayList<>();
    private ZContext context;
    /** Set when the relay begins to close the context (read on its I/O thread). */
    private volatile boolean closing;
    private EngineSide engineSide;
    private RelaySockets sockets;

    private RecordingTap(final RecordContext options)
    {
        this.options = options;
        this.clock = options.nanoClock();
        this.relayRunner = new AgentRunner(new NoOpIdleStrategy(), this::onRelayError, null, new Relay());
    }

    /**
     * Check the output files can be written, start the relay thread and wait until its sockets are bound.
     *
     * @param options the settings; concluded here if they were not.
     * @return the running tap (waiting for the engine).
     * @throws IOException when an output file cannot be written.
     * @throws IllegalArgumentException when a setting is invalid or an address cannot be bound.
     * @throws IllegalStateException if the JVM lacks {@value dev.tapedeck.build.JvmAccess#OPTION}.
     */
    public static RecordingTap start(final RecordContext options) throws IOException
    {
        JvmAccess.requireAgronaAccess();
        options.conclude();
        writable(options.traceOut());
        if (null != options.stepStatsOut())
        {
            writable(options.stepStatsOut());
        }
        final RecordingTap tap = new RecordingTap(options);
        AgentRunner.startOnThread(tap.relayRunner);
        try
        {
            tap.bound.await();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            tap.stop();
            throw new IOException("interrupted while binding", ex);
        }
        if (tap.failure instanceof IllegalArgumentException)
        {
            throw (IllegalArgumentException)tap.failure;
        }
        if (null != tap.failure)
        {
            throw new IOException(tap.failure.getMessage(), tap.failure);
        }
        return tap;
    }

    private static void writable(final Path path) throws IOException
    {
        final Path parent = path.toAbsolutePath().getParent();
        if (null != parent)
        {
            Files.createDirectories(parent);
        }
        if (Files.isDirectory(path) || (null != parent && !Files.isWritable(parent)) ||
            (Files.exists(path) && !Files.isWritable(path)))
        {
            throw new IOException(path + ": cannot write this file");
        }
    }

    /**
     * The relay's duty cycles. Its thread is named after its role, {@code tapedeck-record-relay}.
     */
    private final class Relay implements Agent
    {
        private final List<byte[]> frames = new ArrayList<>();

        @Override
        public String roleName()
        {
            return "tapedeck-record-relay";
        }

        /**
         * Bind, perform both handshakes, open the outputs and start the writer; blocks until both sides are up, the
         * handshake timeout passes or the tap is stopped.
         */
        @Override
        public void onStart()
        {
            try
            {
                handshakeBothSides();
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        }

        private void handshakeBothSides() throws IOException
        {
            context = ZmqContexts.create(1, "record", () -> closing);
            engineSide = new EngineSide(context, options.engineHandshake(), options.inputAddress(),
                options.outputAddress());
            engineHandshakeEndpoint = engineSide.handshakeEndpoint();
            inputEndpoint = engineSide.inputEndpoint();
            outputEndpoint = engineSide.outputEndpoint();
            bound.countDown();
            final EngineSide.Handshaken engine = engineSide.handshake(deadlineNs(), RecordingTap.this::isRunning);
            engineSide.closeHandshake();
            VersionGuard.check(options.vllmVersion(), engine.vllmVersion());
            final VllmLine line = VersionGuard.line(options.vllmVersion(), engine.vllmVersion());
            if (engine.blockSize() > 0 && options.blockSize() > 0 && engine.blockSize() != options.blockSize())
            {
                LOG.log(System.Logger.Level.WARNING, "the engine uses blocks of {0} tokens; block_hashes are " +
                    "fingerprints of {1}-token blocks (--block-size)", engine.blockSize(), options.blockSize());
            }
            meta = meta(engine);
            final TraceWriter trace = TraceWriter.open(options.traceOut(), meta);
            unowned.add(trace);
            final StepStatsWriter stepStats = null == options.stepStatsOut() ? null :
                StepStatsWriter.open(options.stepStatsOut());
            if (null != stepStats)
            {
                unowned.add(stepStats);
            }
            LOG.log(System.Logger.Level.INFO, "engine registered (vLLM {0}, read as line {1}); trace {2}; " +
                "connecting to the frontend at {3}", null == engine.vllmVersion() ? "version not reported" :
                engine.vllmVersion(), line.label(), options.traceOut(), options.frontendHandshake());
            final FrontendSide.Connected frontend = new FrontendSide(context).connect(options.frontendHandshake(),
                engine, deadlineNs(), RecordingTap.this::isRunning);
            // arrival_ms counts from here, when relaying begins (after both handshakes), as docs/record.md says
            final CaptureRecorder recorder = new CaptureRecorder(trace, stepStats, line, options.blockSize(),
                options.recordTokens(), clock.nanoTime());
            unowned.clear();
            startWriter(recorder);
            sockets = new RelaySockets(context, frontend, engineSide, engine);
            relaying.countDown();
            LOG.log(System.Logger.Level.INFO, "relaying between the frontend and the engine; recording to {0}",
                options.traceOut());
        }

        /**
         * Wait up to 20 ms (1 ms while observations wait in the backlog) for messages, relay what came.
         *
         * @return messages relayed.
         */
        @Override
        public int doWork()
        {
            if (!running)
            {
                throw new AgentTerminationException();
            }
            flushBacklog();
            sockets.poller.poll(backlog.isEmpty() ? POLL_MS : 1);
            int work = 0;
            if (sockets.poller.pollin(sockets.frontendIndex))
            {
                work += relayToEngine(sockets.fromFrontend, sockets.toEngine, sockets.engineIdentity, frames);
            }
            if (sockets.poller.pollin(sockets.engineIndex))
            {
                work += relayToFrontend(sockets.fromEngine, sockets.toFrontend, frames);
            }
            return work;
        }

        /**
         * Close the sockets, hand the writer what was observed and let it close the files.
         */
        @Override
        public void onClose()
        {
            try
            {
                if (null != sockets)
                {
                    sockets.poller.close();
                }
                if (null != context)
                {
                    closing = true;
                    context.close();
                }
            }
            finally
            {
                bound.countDown();
                closeAll(unowned);
                finishWriter();
                ended.countDown();
            }
        }
    }

    private void onRelayError(final Throwable error)
    {
        if (error instanceof AgentTerminationException)
        {
            return; // the relay's own way out of its duty cycle after stop()
        }
        if (error instanceof Stopped)
        {
            LOG.log(System.Logger.Level.INFO, "stopped before relaying began");
            return;
        }
        if (null == failure)
        {
            failure = error instanceof UncheckedIOException io ? io.getCause() : error;
        }
        if (0 == relaying.getCount() && running)
        {
            // a failure while relaying ends the tap (the next duty cycle terminates, onClose closes the trace),
            // instead of the runner calling a failing duty cycle again and again; before relaying, the caller
            // reports it (start() or awaitEnd())
            LOG.log(System.Logger.Level.ERROR, "the tap stops: " + error, error);
        }
        running = false;
    }

    /**
     * The four relayed sockets and the poller over the two the tap reads; relay thread only.
     */
    private static final class RelaySockets
    {
        final byte[] engineIdentity;
        final ZMQ.Socket fromFrontend;
        final ZMQ.Socket toFrontend;
        final ZMQ.Socket toEngine;
        final ZMQ.Socket fromEngine;
        final ZMQ.Poller poller;
        final int frontendIndex;
        final int engineIndex;

        RelaySockets(final ZContext context, final FrontendSide.Connected frontend, final EngineSide engineSide,
            final EngineSide.Handshaken engine)
        {
            engineIdentity = null == engineSide.inputIdentity() ? engine.identity() : engineSide.inputIdentity();
            fromFrontend = frontend.input();
            toFrontend = frontend.output();
            toEngine = engineSide.input();
            fromEngine = engineSide.output();
            poller = context.createPoller(2);
            frontendIndex = poller.register(fromFrontend, ZMQ.Poller.POLLIN);
            engineIndex = poller.register(fromEngine, ZMQ.Poller.POLLIN);
        }
    }

    private TraceMeta meta(final EngineSide.Handshaken engine)
    {
        final String tag = null != options.vllmVersion() ? options.vllmVersion() : engine.vllmVersion();
        final String configHash = null != options.configHash() ? options.configHash() :
            ConfigFingerprint.hash(null == options.gpu() ? "" : options.gpu(), null == tag ? "" : tag,
                null == options.engineConfig() ? "" : options.engineConfig());
        return new TraceMeta()
            .source("tap")
            .model(null == options.model() || options.model().isEmpty() ? null : options.model())
            .gpu(options.gpu())
            .tp(options.tp())
            .maxNumSeqs(options.maxNumSeqs())
            .blockSize((long)options.blockSize())
            .configHash(configHash)
            .vllmVersion(engine.vllmVersion())
            .readyResponseHex(engine.registrationHex());
    }

    private void startWriter(final CaptureRecorder recorder)
    {
        captureAgent = new CaptureAgent(queue, recorder);
        writerRunner = new AgentRunner(new BackoffIdleStrategy(10, 10, TimeUnit.MICROSECONDS.toNanos(10),
            TimeUnit.MILLISECONDS.toNanos(1)), ex -> LOG.log(System.Logger.Level.ERROR, "capture writer: " +
            ex.getMessage(), ex), null, captureAgent);
        AgentRunner.startOnThread(writerRunner);
    }

    private int relayToEngine(final ZMQ.Socket from, final ZMQ.Socket to, final byte[] identity,
        final List<byte[]> frames)
    {
        for (int n = 0; n < MESSAGES_PER_PASS; n++)
        {
            final long atNs = receive(from, frames);
            if (frames.isEmpty())
            {
                return n;
            }
            final boolean sent = to.send(identity, ZMQ.SNDMORE | ZMQ.DONTWAIT) && sendFrames(to, frames);
            countSent(sent, "the engine");
            messagesToEngine++;
            if (frames.size() >= 2 && 1 == frames.get(0).length)
            {
                observe(new Observation(frames.get(0)[0], atNs, frames.get(1)));
            }
        }
        return MESSAGES_PER_PASS;
    }

    private int relayToFrontend(final ZMQ.Socket from, final ZMQ.Socket to, final List<byte[]> frames)
    {
        for (int n = 0; n < MESSAGES_PER_PASS; n++)
        {
            final long atNs = receive(from, frames);
            if (frames.isEmpty())
            {
                return n;
            }
            countSent(sendFrames(to, frames), "the frontend");
            messagesToFrontend++;
            observe(new Observation(Observation.OUTPUT, atNs, frames.get(0)));
        }
        return MESSAGES_PER_PASS;
    }

    /**
     * Receive one whole message without waiting: the frames in {@code frames} (empty when none is pending).
     *
     * @return when its first frame arrived.
     */
    private long receive(final ZMQ.Socket from, final List<byte[]> frames)
    {
        frames.clear();
        final byte[] first = from.recv(ZMQ.DONTWAIT);
        if (null == first)
        {
            return 0;
        }
        final long atNs = clock.nanoTime();
        frames.add(first);
        while (from.hasReceiveMore())
        {
            frames.add(from.recv(0));
        }
        return atNs;
    }

    private static boolean sendFrames(final ZMQ.Socket to, final List<byte[]> frames)
    {
        final int last = frames.size() - 1;
        for (int i = 0; i < last; i++)
        {
            if (!to.send(frames.get(i), ZMQ.SNDMORE | ZMQ.DONTWAIT))
            {
                return false;
            }
        }
        return to.send(frames.get(last), ZMQ.DONTWAIT);
    }

    private void countSent(final boolean sent, final String to)
    {
        if (!sent)
        {
            sendFailures++;
            if (1 == sendFailures)
            {
                LOG.log(System.Logger.Level.ERROR, "a message could not be handed to {0} (its socket refused " +
                    "it); further failures are counted", to);
            }
        }
    }

    private void observe(final Observation observation)
    {
        if (backlog.isEmpty() && queue.offer(observation))
        {
            return;
        }
        if (backlog.isEmpty())
        {
            LOG.log(System.Logger.Level.WARNING, "the capture writer is behind by {0} messages; observations wait " +
                "in the relay''s backlog (relaying is not slowed)", QUEUE_CAPACITY);
        }
        backlog.addLast(observation);
    }

    private void flushBacklog()
    {
        while (!backlog.isEmpty() && queue.offer(backlog.peekFirst()))
        {
            backlog.pollFirst();
        }
    }

    /**
     * Hand the writer what is left in the backlog, then let it drain the queue and close the files.
     */
    private void finishWriter()
    {
        if (null == writerRunner)
        {
            return;
        }
        final long deadline = System.nanoTime() + WRITER_HANDOVER_NS;
        while (!backlog.isEmpty() && System.nanoTime() - deadline < 0)
        {
            flushBacklog();
            Thread.onSpinWait();
        }
        if (!backlog.isEmpty())
        {
            LOG.log(System.Logger.Level.ERROR, "{0} observed messages could not be handed to the capture writer",
                backlog.size());
        }
        writerRunner.close();
    }

    private static void closeAll(final List<Closeable> closeables)
    {
        for (final Closeable closeable : closeables)
        {
            try
            {
                closeable.close();
            }
            catch (final IOException ex)
            {
                LOG.log(System.Logger.Level.ERROR, "closing an output failed: " + ex.getMessage());
            }
        }
    }

    private long deadlineNs()
    {
        return System.nanoTime() + options.handshakeTimeoutNs();
    }

    private boolean isRunning()
    {
        return running;
    }

    /**
     * Stop relaying; the relay closes the sockets and the writer closes the trace. Safe from any thread; returns at
     * once ({@link #awaitEnd} waits for the end).
     */
    public void stop()
    {
        running = false;
    }

    /**
     * @param timeoutMs how long to wait.
     * @return true once both handshakes are done and messages are being relayed.
     * @throws InterruptedException if interrupted.
     */
    public boolean awaitRelaying(final long timeoutMs) throws InterruptedException
    {
        relaying.await(timeoutMs, TimeUnit.MILLISECONDS);
        return 0 == relaying.getCount() && 0 != ended.getCount();
    }

    /**
     * @param timeoutMs how long to wait.
     * @return true once the relay thread ended and the trace is closed.
     * @throws InterruptedException if interrupted.
     */
    public boolean awaitEnd(final long timeoutMs) throws InterruptedException
    {
        return ended.await(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** @return why the tap ended other than by {@link #stop()}, or null. */
    public Throwable failure()
    {
        return failure;
    }

    /** @return the handshake endpoint the engine connects to, as bound. */
    public String engineHandshakeEndpoint()
    {
        return engineHandshakeEndpoint;
    }

    /** @return the input endpoint named in INIT, as bound. */
    public String inputEndpoint()
    {
        return inputEndpoint;
    }

    /** @return the output endpoint named in INIT, as bound. */
    public String outputEndpoint()
    {
        return outputEndpoint;
    }

    /** @return the trace's meta line, once the engine registered (else null). */
    public TraceMeta meta()
    {
        return meta;
    }

    /** @return messages relayed from the frontend to the engine. */
    public long messagesToEngine()
    {
        return messagesToEngine;
    }

    /** @return messages relayed from the engine to the frontend. */
    public long messagesToFrontend()
    {
        return messagesToFrontend;
    }

    /** @return messages a socket refused to take (0 unless something is badly wrong). */
    public long sendFailures()
    {
        return sendFailures;
    }

    /** @return trace records written so far. */
    public long recordsWritten()
    {
        final CaptureAgent agent = captureAgent;
        return null == agent ? 0 : agent.recorder().records();
    }
}
