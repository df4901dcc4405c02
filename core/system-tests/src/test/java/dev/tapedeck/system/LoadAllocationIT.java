package dev.tapedeck.system;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.tapedeck.load.LengthDistribution;
import dev.tapedeck.load.LoadPlan;
import dev.tapedeck.load.LoadRun;
import dev.tapedeck.load.PromptFactory;
import dev.tapedeck.load.RequestBodies;
import dev.tapedeck.load.RunResult;
import dev.tapedeck.load.Slo;
import dev.tapedeck.http.TestServer;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.load.client.LoadClient;
import dev.tapedeck.net.Transport;
import dev.tapedeck.testing.LeakDetectionOff;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the load generator allocates per request, on the dispatcher thread (building the body, the exchange, the
 * schedule) and on the client's event loop (the request's encoding, the response's decoding and SSE parsing, the
 * timeout, the records), for short streaming requests in a closed loop against a real server. Measured with the
 * threads' allocated-bytes counters around two runs of different lengths, each on a fresh client: the difference
 * divided by the difference in requests leaves out what a run and a client allocate once (histograms, report,
 * connections). Leak detection is switched off for this test only: in paranoid mode Netty records a stack trace per
 * buffer.
 */
@Timeout(120)
class LoadAllocationIT
{
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
    private static final String LOOP_THREAD = "tapedeck-load-";
    /** 64 connections: each carries fewer than 100 requests of a run. */
    private static final int CONCURRENCY = 64;
    private static final int SHORT_RUN = 2_000;
    private static final int LONG_RUN = 6_000;

    @Test
    void shouldAllocateLittlePerRequest() throws Exception
    {
        LeakDetectionOff.during(this::measure);
    }

    private void measure() throws Exception
    {
        // 2 ms steps: a request of 4 output tokens takes about 10 ms, so 64 in flight make several thousand a second
        try (TestServer server = new TestServer(TestServer.context(), c -> c.latencyModel(new StepLatencyModel(
            new StepCoefficients("fast", 2_000, 0, 0, 0, 0, "test")))))
        {
            final URI url = URI.create("http://127.0.0.1:" + server.ports.get(0));
            run(url, SHORT_RUN); // warm up: JIT, pooled buffers
            final long[] shortRun = run(url, SHORT_RUN);
            final long[] longRun = run(url, LONG_RUN);
            final double dispatcher = (double)(longRun[0] - shortRun[0]) / (LONG_RUN - SHORT_RUN);
            final double eventLoop = (double)(longRun[1] - shortRun[1]) / (LONG_RUN - SHORT_RUN);
            System.out.printf("per request: dispatcher %.0f bytes, event loop %.0f bytes%n", dispatcher, eventLoop);
            assertTrue(dispatcher < 1_000, "dispatcher allocated " + dispatcher + " bytes per request");
            // 24 bytes measured since the client reads responses with its own parser (1,200 with Netty's decoder)
            assertTrue(eventLoop < 300, "event loop allocated " + eventLoop + " bytes per request");
        }
    }

    /**
     * One closed-loop run on a fresh client.
     *
     * @return bytes allocated by this thread (the dispatcher) and by the client's event loop.
     */
    private static long[] run(final URI url, final int requests) throws InterruptedException
    {
        final RequestBodies bodies = new RequestBodies(RequestBodies.Endpoint.COMPLETIONS, TestServer.MODEL, true,
            true, false, true, new PromptFactory(LoadHarness.words(), 7, 0, false));
        final LoadPlan plan = LoadPlan.pool(64, LengthDistribution.parse("32"), LengthDistribution.parse("4"), 1);
        final LoadRun.Settings settings = new LoadRun.Settings(plan, LoadRun.Mode.CLOSED, CONCURRENCY, requests, 0,
            0, LoadHarness.DRAIN_NS, Slo.NONE, "alloc");
        final Set<Long> before = loopThreads();
        try (LoadClient client = new LoadClient(url, 1, Map.of(), TimeUnit.SECONDS.toNanos(30),
            Transport.select("auto")))
        {
            assertTrue(client.preconnect(CONCURRENCY, TimeUnit.SECONDS.toNanos(10)));
            final Set<Long> loops = loopThreads();
            loops.removeAll(before);
            assertEquals(1, loops.size(), "the client's one event loop: " + loops);
            final long loop = loops.iterator().next();
            final long dispatcherBefore = THREADS.getCurrentThreadAllocatedBytes();
            final long loopBefore = THREADS.getThreadAllocatedBytes(loop);
            final RunResult result = new LoadRun(settings, client, bodies).run(null);
            final long[] bytes = {THREADS.getCurrentThreadAllocatedBytes() - dispatcherBefore,
                THREADS.getThreadAllocatedBytes(loop) - loopBefore};
            assertEquals(requests, result.sent());
            assertEquals(requests, result.recorder().completed(), result.recorder().errors().toString());
            return bytes;
        }
    }

    private static Set<Long> loopThreads()
    {
        final Set<Long> ids = new HashSet<>();
        for (final Thread t : Thread.getAllStackTraces().keySet())
        {
            if (t.getName().startsWith(LOOP_THREAD))
            {
                ids.add(t.getId());
            }
        }
        return ids;
    }
}
