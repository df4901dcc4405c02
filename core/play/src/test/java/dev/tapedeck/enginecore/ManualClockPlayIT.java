package dev.tapedeck.enginecore;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.Test;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.play.PlayContext;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * An engine core whose clock the test advances by hand, driven by an {@link AgentInvoker} instead of an
 * {@code AgentRunner}: a step ends when, and only when, the clock passes its end, and every output is stamped with the
 * engine's time, so the timing a frontend sees is exact, not a matter of how busy the machine is.
 */
class ManualClockPlayIT
{
    private static final long START_NS = 7_000_000_000L;
    private static final long STEP_NS = TimeUnit.MILLISECONDS.toNanos(2);

    @Test
    void shouldEndEachStepExactlyWhenTheClockPassesIt() throws Exception
    {
        final CachedNanoClock clock = new CachedNanoClock();
        clock.update(START_NS);
        try (TestFrontend frontend = new TestFrontend(1))
        {
            final PlayContext context = new PlayContext().handshakeAddress(frontend.handshakeAddress)
                .handshakeTimeoutNs(TimeUnit.SECONDS.toNanos(20)).nanoClock(clock)
                .engine(new EngineConfig().maxModelLen(4096).latencyModel(new StepLatencyModel(
                    new StepCoefficients("two-ms", STEP_NS / 1000.0, 0, 0, 0, 0, "test"))))
                .conclude();
            final EngineConfig config = context.engine().copy().tokenSpace(new int[] {0}, -1).conclude();
            final EngineCoreAgent agent = new EngineCoreAgent(0, context.playOptions(null), config, null);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final AgentInvoker invoker = new AgentInvoker(failure::set, null, agent);
            final Thread driver = new Thread(() ->
            {
                invoker.start();
                while (!invoker.isClosed() && !Thread.currentThread().isInterrupted())
                {
                    if (0 == invoker.invoke())
                    {
                        LockSupport.parkNanos(50_000);
                    }
                }
            }, "manual-clock-engine");
            driver.start();
            try
            {
                frontend.awaitEngines(1);
                frontend.outputs.get(0).setReceiveTimeOut(300);
                frontend.add(0, "r1", new int[] {11, 12, 13, 14, 15, 16, 17, 18}, 3, 0);
                assertNull(frontend.next(0), "the clock stands still: the first step has not ended");

                clock.advance(STEP_NS);
                final TestFrontend.Outputs first = nextWithToken(frontend);
                assertEquals((START_NS + STEP_NS) / 1e9, first.timestamp(), 1e-9, "stamped with the step's end");
                assertEquals(1, first.outputs().get(0).tokens().size(), "prefill step: the first token");

                clock.advance(STEP_NS - 1);
                assertNull(frontend.next(0), "one nanosecond short of the second step's end");
                clock.advance(1);
                final TestFrontend.Outputs second = nextWithToken(frontend);
                assertEquals((START_NS + 2 * STEP_NS) / 1e9, second.timestamp(), 1e-9);

                clock.advance(STEP_NS);
                final TestFrontend.Outputs third = nextWithToken(frontend);
                assertEquals((START_NS + 3 * STEP_NS) / 1e9, third.timestamp(), 1e-9);
                assertNotNull(third.outputs().get(0).finishReason(), "max_tokens 3 reached: " + third);
                assertNull(failure.get(), () -> "engine failed: " + failure.get());
            }
            finally
            {
                driver.interrupt();
                driver.join(10_000);
                invoker.close();
            }
        }
    }

    private static TestFrontend.Outputs nextWithToken(final TestFrontend frontend) throws Exception
    {
        for (int i = 0; i < 20; i++)
        {
            final TestFrontend.Outputs outputs = frontend.next(0);
            assertNotNull(outputs, "no output within 300 ms of the clock passing the step's end");
            final List<TestFrontend.Output> list = outputs.outputs();
            if (!list.isEmpty() && !list.get(0).tokens().isEmpty())
            {
                return outputs;
            }
        }
        throw new AssertionError("20 outputs without a token");
    }
}
