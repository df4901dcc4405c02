package dev.tapedeck.http;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.testing.LeakDetectionOff;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the event loop of an instance allocates per token in steady state, with 256 real streaming connections:
 * scheduling, SSE encoding, chunked framing, Netty's write and flush, and the step timer. Measured with the loop
 * thread's allocated-bytes counter around two seconds of decoding. Leak detection is switched off for this test only:
 * in paranoid mode Netty records a stack trace per buffer, which is what would be measured otherwise.
 */
@Timeout(60)
class SteadyStateAllocationIT
{
    private static final int STREAMS = 256;
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    @Test
    void shouldAllocateAlmostNothingPerStreamedToken() throws Exception
    {
        LeakDetectionOff.during(this::measure);
    }

    private void measure() throws Exception
    {
        try (TestServer server = new TestServer(TestServer.context(), c -> c.maxNumSeqs(STREAMS)
            .maxModelLen(1 << 20).blockSize(1 << 12).kvCacheBlocks(STREAMS << 8) // every context fits: no preemption
            .latencyModel(new StepLatencyModel(
                new StepCoefficients("alloc", 10_000, 0, 0, 0, 0, "test"))));
            Selector selector = Selector.open())
        {
            final List<SocketChannel> clients = new ArrayList<>();
            final byte[] body = "{\"prompt\":\"x\",\"stream\":true,\"max_tokens\":1000000}"
                .getBytes(StandardCharsets.UTF_8);
            final byte[] request = ("POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n" +
                "content-length: " + body.length + "\r\n\r\n" + new String(body, StandardCharsets.UTF_8))
                .getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < STREAMS; i++)
            {
                final SocketChannel client = SocketChannel.open(new InetSocketAddress("127.0.0.1",
                    server.ports.get(0)));
                client.write(ByteBuffer.wrap(request));
                client.configureBlocking(false);
                client.register(selector, SelectionKey.OP_READ);
                clients.add(client);
            }
            final Thread reader = new Thread(() -> drain(selector), "drain");
            reader.setDaemon(true);
            reader.start();
            for (int i = 0; i < 500 && server.server.onEngine(0, e -> e.numRunning()) < STREAMS; i++)
            {
                Thread.sleep(10);
            }
            assertEquals(STREAMS, (int)server.server.onEngine(0, e -> e.numRunning()));
            Thread.sleep(2000); // warm up: JIT, pooled buffers, outbound entries
            final long[] before = server.server.onEngine(0, e -> sample(e));
            Thread.sleep(2000);
            final long[] after = server.server.onEngine(0, e -> sample(e));
            final long bytes = after[0] - before[0];
            final long tokens = after[1] - before[1];
            assertTrue(tokens > 100 * STREAMS, "decoding: " + tokens + " tokens");
            final double perToken = (double)bytes / tokens;
            System.out.printf("event loop allocated %d bytes for %d tokens: %.3f bytes/token%n", bytes, tokens,
                perToken);
            assertTrue(perToken < 2.0, "event loop allocated " + perToken + " bytes per token");
            reader.interrupt();
            for (final SocketChannel client : clients)
            {
                client.close();
            }
        }
    }

    private static long[] sample(final dev.tapedeck.engine.Engine engine)
    {
        final long bytes = THREADS.getCurrentThreadAllocatedBytes();
        return new long[] {bytes, engine.metrics().generationTokens()};
    }

    private static void drain(final Selector selector)
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(256 * 1024);
        try
        {
            while (!Thread.currentThread().isInterrupted() && selector.isOpen())
            {
                selector.select(100);
                for (final SelectionKey key : selector.selectedKeys())
                {
                    buffer.clear();
                    if (((SocketChannel)key.channel()).read(buffer) < 0)
                    {
                        key.cancel();
                    }
                }
                selector.selectedKeys().clear();
            }
        }
        catch (final IOException | java.nio.channels.ClosedSelectorException ignored)
        {
            // the test is over
        }
    }
}
