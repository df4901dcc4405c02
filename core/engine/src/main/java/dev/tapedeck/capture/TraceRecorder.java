package dev.tapedeck.capture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.SleepingMillisIdleStrategy;

import dev.tapedeck.engine.Request;
import dev.tapedeck.engine.RequestObserver;
import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceWriter;

/**
 * Self-capture ({@code --trace-out}): every request that finishes in an engine becomes a trace record
 * ({@link CaptureObserver}: arrival, requests in flight, block fingerprints, cached tokens, the real gap before each
 * token with the batch around it, finish reason; with {@code recordTokens}, the token ids).
 * <p>
 * Engines call the {@link RequestObserver} methods on their own threads; per-request state lives on the request.
 * Finished records go through a bounded many-to-one queue to one writer thread, which writes and flushes them, so an
 * engine never waits for the disk; if the writer falls that far behind, records are dropped and counted
 * ({@link #droppedRecords()}) rather than stalling the engines. {@link #close()} writes what is queued and closes the
 * file (gzip trailer).
 */
public final class TraceRecorder implements RequestObserver, AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(TraceRecorder.class.getName());
    private static final int QUEUE_CAPACITY = 64 * 1024;

    private final CaptureObserver capture;
    private final Path path;
    private final ManyToOneConcurrentArrayQueue<TraceRecord> queue =
        new ManyToOneConcurrentArrayQueue<>(QUEUE_CAPACITY);
    private final AtomicLong droppedRecords = new AtomicLong();
    private final WriterAgent writerAgent;
    private final AgentRunner runner;

    private TraceRecorder(final Path path, final TraceWriter writer, final long startNs, final boolean recordTokens,
        final int blockSize)
    {
        this.path = path;
        this.capture = new CaptureObserver(startNs, recordTokens, blockSize, this::enqueue);
        this.writerAgent = new WriterAgent(writer, queue);
        this.runner = new AgentRunner(new SleepingMillisIdleStrategy(1), this::onWriterError, null, writerAgent);
    }

    /**
     * Create the file, write the meta line and start the writer thread.
     *
     * @param path the trace file (gzip when it ends with {@code .gz}).
     * @param meta the meta line.
     * @param recordTokens true to keep output token ids.
     * @param blockSize tokens per block of {@code block_hashes} (0 for none).
     * @param startNs {@link System#nanoTime()} that is {@code arrival_ms} 0.
     * @return the running recorder.
     * @throws IOException if the file cannot be created.
     */
    public static TraceRecorder start(final Path path, final TraceMeta meta, final boolean recordTokens,
        final int blockSize, final long startNs) throws IOException
    {
        final TraceWriter writer = TraceWriter.open(path, meta);
        final TraceRecorder recorder = new TraceRecorder(path, writer, startNs, recordTokens, blockSize);
        AgentRunner.startOnThread(recorder.runner);
        return recorder;
    }

    @Override
    public void onAccepted(final Request request, final int inFlight)
    {
        capture.onAccepted(request, inFlight);
    }

    @Override
    public void onToken(final Request request, final int tokenId, final long atNs, final int running,
        final int prefillTokens, final boolean continuesChunk)
    {
        capture.onToken(request, tokenId, atNs, running, prefillTokens, continuesChunk);
    }

    @Override
    public void onFinished(final Request request)
    {
        capture.onFinished(request);
    }

    private void enqueue(final TraceRecord record)
    {
        if (!queue.offer(record))
        {
            droppedRecords.incrementAndGet();
        }
    }

    /**
     * @return records dropped because the writer could not keep up.
     */
    public long droppedRecords()
    {
        return droppedRecords.get();
    }

    /**
     * @return records written to the file so far.
     */
    public long writtenRecords()
    {
        return writerAgent.written;
    }

    /**
     * Write every queued record and close the file. Call after the engines stopped.
     */
    @Override
    public void close()
    {
        runner.close();
        final long dropped = droppedRecords.get();
        LOG.log(dropped > 0 ? System.Logger.Level.WARNING : System.Logger.Level.INFO,
            "trace {0}: {1} records written{2}", path, writerAgent.written,
            dropped > 0 ? ", " + dropped + " dropped (the disk could not keep up)" : "");
    }

    private void onWriterError(final Throwable error)
    {
        LOG.log(System.Logger.Level.ERROR, "trace " + path + ": writing failed", error);
    }

    /**
     * Drains finished records into the file on its own thread; flushes once per drained batch.
     */
    private static final class WriterAgent implements org.agrona.concurrent.Agent
    {
        private static final int DRAIN_LIMIT = 1024;

        private final TraceWriter writer;
        private final ManyToOneConcurrentArrayQueue<TraceRecord> queue;
        private volatile long written;
        private IOException failure;

        WriterAgent(final TraceWriter writer, final ManyToOneConcurrentArrayQueue<TraceRecord> queue)
        {
            this.writer = writer;
            this.queue = queue;
        }

        @Override
        public int doWork() throws IOException
        {
            final int drained = queue.drain(this::write, DRAIN_LIMIT);
            if (drained > 0)
            {
                rethrowFailure();
                writer.flush();
            }
            return drained;
        }

        private void write(final TraceRecord record)
        {
            if (null != failure)
            {
                return;
            }
            try
            {
                writer.write(record, false);
                written++;
            }
            catch (final IOException ex)
            {
                failure = ex;
            }
        }

        private void rethrowFailure() throws IOException
        {
            if (null != failure)
            {
                final IOException ex = failure;
                failure = null;
                throw ex;
            }
        }

        @Override
        public void onClose()
        {
            try
            {
                queue.drain(this::write);
                rethrowFailure();
                writer.close();
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        }

        @Override
        public String roleName()
        {
            return "tapedeck-trace-writer";
        }
    }
}
