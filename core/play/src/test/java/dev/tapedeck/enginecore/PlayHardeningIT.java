package dev.tapedeck.enginecore;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.value.Value;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.fault.FaultSchedule;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;
import dev.tapedeck.protocol.enginecore.VllmLine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * play against hostile frontends and with engine faults, on real ZeroMQ sockets: an ADD or UTILITY naming a client
 * that does not exist is answered on the client it came from, negative token ids are refused, a shutdown cuts a
 * handshake short, a failed handshake is fatal, and the {@code die}, {@code dead} and {@code stall} faults.
 */
@Timeout(60)
class PlayHardeningIT
{
    private static final LatencyModel FAST =
        new StepLatencyModel(new StepCoefficients("test", 1000, 0.5, 5, 0, 0, "test"));
    private static final int[] PROMPT = {101, 102, 103, 104, 105, 106, 107, 108};
    private static final int ERROR = 3;
    private TestFrontend frontend;
    private Play play;

    private void start(final int clients, final List<String> faults) throws Exception
    {
        frontend = new TestFrontend(clients);
        play = Play.start(new PlayContext().handshakeAddress(frontend.handshakeAddress).vllmLine(VllmLine.NEWEST)
            .handshakeTimeoutNs(20_000_000_000L).shutdownTimeoutNs(0)
            .engine(new EngineConfig().maxModelLen(4096).latencyModel(FAST))
            .faults(FaultSchedule.parse(faults, "test")));
        frontend.awaitEngines(1);
    }

    @AfterEach
    void stop()
    {
        if (null != play)
        {
            play.shutdown(0);
        }
        if (null != frontend)
        {
            frontend.close();
        }
    }

    private Integer finishOf(final String requestId, final int client) throws Exception
    {
        while (true)
        {
            final TestFrontend.Outputs message = frontend.next(client);
            assertNotNull(message, "no output for " + requestId);
            for (final TestFrontend.Output output : message.outputs())
            {
                if (requestId.equals(output.requestId()) && null != output.finishReason())
                {
                    return output.finishReason();
                }
            }
        }
    }

    @Test
    void shouldAnswerAnAddForAClientThatDoesNotExistOnTheClientItCameFrom() throws Exception
    {
        start(2, List.of());
        frontend.send(0, 1, (byte)0, TestFrontend.addPayload("lost", PROMPT, 4, 9, new int[0], false));
        assertEquals(ERROR, finishOf("lost", 1), "an error finish on client 1, where the ADD came from");
        frontend.add(0, "fine", PROMPT, 3, 0);
        assertEquals(1, finishOf("fine", 0), "the engine goes on (LENGTH)");
        assertEquals(1, play.agents().get(0).malformedFrames());
    }

    @Test
    void shouldFailAUtilityCallForAClientThatDoesNotExistOnTheClientItCameFrom() throws Exception
    {
        start(1, List.of());
        final MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(4).packInt(7).packLong(42).packString("is_sleeping").packArrayHeader(0);
        frontend.send(0, 0, (byte)3, p.toByteArray());
        final TestFrontend.Outputs reply = frontend.next(0);
        assertNotNull(reply, "a reply instead of silence");
        final List<Value> result = reply.utility().asArrayValue().list();
        assertEquals(42, result.get(0).asIntegerValue().toLong());
        assertTrue(result.get(1).toString().contains("client_index 7 is out of range"), result.toString());
        assertEquals(1, play.agents().get(0).malformedFrames());
    }

    @Test
    void shouldRefuseNegativeTokenIds() throws Exception
    {
        start(1, List.of());
        frontend.add(0, "negative", new int[] {101, -5, 103}, 3, 0);
        assertEquals(ERROR, finishOf("negative", 0));
        frontend.add(0, "fine", PROMPT, 3, 0);
        assertEquals(1, finishOf("fine", 0));
        assertEquals(1, play.agents().get(0).malformedFrames());
    }

    @Test
    void shouldCutAHandshakeShortOnShutdown() throws Exception
    {
        try (ZContext zmq = new ZContext())
        {
            final ZMQ.Socket silent = zmq.createSocket(SocketType.ROUTER); // accepts HELLO, never sends INIT
            final String address = "tcp://127.0.0.1:" + silent.bindToRandomPort("tcp://127.0.0.1");
            play = Play.start(new PlayContext().handshakeAddress(address).handshakeTimeoutNs(300_000_000_000L)
                .shutdownTimeoutNs(0).engine(new EngineConfig().maxModelLen(4096).latencyModel(FAST)));
            silent.setReceiveTimeOut(10_000);
            assertNotNull(silent.recv(0), "the engine said HELLO");
            assertNull(play.fatal(), "waiting for INIT is not an error");
            assertEquals(0, play.shutdown(0), "shutdown returns (bounded by the test's timeout, not by 5 minutes)");
            assertTrue(play.agents().get(0).isStopped());
            assertNull(play.fatal(), "a shutdown is not a failure");
        }
    }

    @Test
    void shouldReportAFailedHandshakeAsFatal() throws Exception
    {
        try (ZContext zmq = new ZContext())
        {
            final ZMQ.Socket silent = zmq.createSocket(SocketType.ROUTER);
            final String address = "tcp://127.0.0.1:" + silent.bindToRandomPort("tcp://127.0.0.1");
            play = Play.start(new PlayContext().handshakeAddress(address).handshakeTimeoutNs(300_000_000L)
                .shutdownTimeoutNs(0).engine(new EngineConfig().maxModelLen(4096).latencyModel(FAST)));
            String fatal = null;
            for (int i = 0; i < 1000 && null == fatal; i++) // a bound on a hang, not a timing check
            {
                Thread.sleep(10);
                fatal = play.fatal();
            }
            assertNotNull(fatal);
            assertTrue(fatal.contains("no INIT from the frontend"), fatal);
        }
    }

    @Test
    void shouldSendVllmsEngineDeadSentinelAndThenStaySilent() throws Exception
    {
        start(1, List.of("t=0s dead"));
        final ZMsg sentinel = ZMsg.recvMsg(frontend.outputs.get(0));
        assertNotNull(sentinel);
        assertEquals(1, sentinel.size(), "one frame");
        assertArrayEquals("ENGINE_CORE_DEAD".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
            sentinel.pop().getData());
        frontend.add(0, "after", PROMPT, 3, 0);
        frontend.outputs.get(0).setReceiveTimeOut(500);
        assertNull(frontend.next(0), "a dead engine answers nothing");
        assertNull(play.fatal(), "the engine thread still runs (as vLLM's process waits to be killed)");
    }

    @Test
    void shouldDieOnScheduleAndLetPlaySayEveryEngineStopped() throws Exception
    {
        start(1, List.of("t=200ms die"));
        frontend.add(0, "first", PROMPT, 3, 0);
        assertEquals(1, finishOf("first", 0), "served before the fault");
        String fatal = null;
        for (int i = 0; i < 1000 && null == fatal; i++) // a bound on a hang, not a timing check
        {
            Thread.sleep(10);
            fatal = play.fatal();
        }
        assertEquals("every engine stopped", fatal);
        assertTrue(play.agents().get(0).isStopped());
    }

    @Test
    void shouldStallOnScheduleAndGoOn() throws Exception
    {
        start(1, List.of("t=0s stall for 600ms"));
        final long sentNs = System.nanoTime();
        frontend.add(0, "stalled", PROMPT, 3, 0);
        assertEquals(1, finishOf("stalled", 0), "served after the stall");
        assertTrue(System.nanoTime() - sentNs >= 400_000_000L, "nothing came during the stall");
    }

    @Test
    void shouldRefuseServeFaultsAndDieWithADuration()
    {
        final PlayContext unhealthy = new PlayContext().handshakeAddress("tcp://127.0.0.1:1")
            .faults(FaultSchedule.parse(List.of("t=1s unhealthy"), "f"));
        assertTrue(assertThrows(IllegalArgumentException.class, unhealthy::conclude).getMessage()
            .contains("line 1: 'unhealthy' cannot be injected by play"));
        final PlayContext dieFor = new PlayContext().handshakeAddress("tcp://127.0.0.1:1")
            .faults(FaultSchedule.parse(Arrays.asList("# c", "t=1s die for 2s"), "f"));
        assertTrue(assertThrows(IllegalArgumentException.class, dieFor::conclude).getMessage()
            .contains("line 2: 'die' lasts for the rest of the run"));
    }

    /** The result of the next utility reply on client 0 (its failure message as a string when it failed). */
    private Value utilityResult() throws Exception
    {
        while (true)
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message, "a utility reply");
            if (!message.utility().isNilValue())
            {
                final List<Value> reply = message.utility().asArrayValue().list();
                return reply.get(1).isNilValue() ? reply.get(2).asArrayValue().get(1) : reply.get(1);
            }
        }
    }

    @Test
    void shouldSleepHoldNewRequestsAndAdmitThemAtTheWakeUp() throws Exception
    {
        start(1, List.of());
        frontend.add(0, "long", PROMPT, 3000, 0);
        assertNotNull(frontend.next(0), "it runs");
        frontend.utility(0, 1, "sleep", org.msgpack.value.ValueFactory.newInteger(1),
            org.msgpack.value.ValueFactory.newString("abort"));
        assertEquals(2, finishOf("long", 0), "mode abort: what ran is aborted (ABORT)");
        assertTrue(utilityResult().isNilValue(), "sleep answers nil");
        frontend.utility(0, 2, "is_sleeping");
        assertEquals("true", utilityResult().toString());

        frontend.add(0, "held", PROMPT, 3, 0);
        frontend.add(0, "dropped", PROMPT, 3, 0);
        frontend.abort(0, "dropped"); // aborted while held: never admitted
        frontend.outputs.get(0).setReceiveTimeOut(300);
        assertNull(frontend.next(0), "a sleeping engine admits nothing");
        frontend.outputs.get(0).setReceiveTimeOut(10_000);
        frontend.utility(0, 3, "wake_up", org.msgpack.value.ValueFactory.newArray(
            org.msgpack.value.ValueFactory.newString("weights")));
        assertEquals("false", utilityResult().toString(), "the KV cache is still released");
        frontend.utility(0, 4, "wake_up", org.msgpack.value.ValueFactory.newNil());
        assertEquals("true", utilityResult().toString(), "awake");
        final java.util.Set<String> served = new java.util.HashSet<>();
        while (!served.contains("held"))
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message, "the held request is served");
            message.outputs().forEach(o -> served.add(o.requestId()));
        }
        frontend.outputs.get(0).setReceiveTimeOut(300);
        for (TestFrontend.Outputs message; null != (message = frontend.next(0)); )
        {
            message.outputs().forEach(o -> served.add(o.requestId()));
        }
        frontend.outputs.get(0).setReceiveTimeOut(10_000);
        assertFalse(served.contains("dropped"), "the aborted held ADD never ran: " + served);
        frontend.utility(0, 5, "sleep", org.msgpack.value.ValueFactory.newInteger(7));
        assertTrue(utilityResult().toString().contains("level must be 0, 1 or 2"));
    }
}
