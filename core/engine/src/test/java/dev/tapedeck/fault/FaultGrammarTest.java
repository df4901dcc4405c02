package dev.tapedeck.fault;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.SeededRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fault grammar: request faults, the rate mix, and the schedule file with its errors (file and line).
 */
class FaultGrammarTest
{
    @Test
    void shouldParseEveryRequestFault()
    {
        assertEquals(new RequestFault(RequestFault.Kind.RATE_LIMIT, 0, 0, 0), RequestFault.parse("rate_limit"));
        assertEquals(429, RequestFault.parse("rate_limit").httpStatus());
        assertEquals(503, RequestFault.parse(" SERVER_ERROR ").httpStatus());
        assertEquals(418, RequestFault.parse("status:418").httpStatus());
        assertEquals(new RequestFault(RequestFault.Kind.STALL, 0, 2_000_000_000L, 5), RequestFault.parse("stall:2s@5"));
        assertEquals(new RequestFault(RequestFault.Kind.RESET, 0, 0, 1), RequestFault.parse("reset"));
        assertTrue(message("abort@0").contains("token count >= 1"), "a stream fault strikes after a token");
        assertEquals(250_000_000L, RequestFault.parse("first-byte:250ms").durationNs());
        for (final String text : List.of("rate_limit", "status:503", "stall:1.5s@3", "first-byte:250ms", "reset@7",
            "abort@2", "model_not_found"))
        {
            assertEquals(text, RequestFault.parse(text).toString(), "round trip");
        }
        assertTrue(RequestFault.parse("status:500").kind().isError());
        assertTrue(!RequestFault.parse("stall:1s").kind().isError());
    }

    @Test
    void shouldRefuseFaultsThatDoNotParseWithTheReason()
    {
        assertTrue(message("bogus").startsWith("unknown fault 'bogus' (expected one of rate_limit"), message("bogus"));
        assertTrue(message("status:200").contains("400 to 599"), message("status:200"));
        assertTrue(message("status:x").contains("needs an HTTP status"), message("status:x"));
        assertTrue(message("stall").contains("needs a duration"), message("stall"));
        assertTrue(message("stall:2s@-1").contains("token count >= 1"), message("stall:2s@-1"));
        assertTrue(message("rate_limit@3").contains("only reset, stall and abort take @N"), message("rate_limit@3"));
        assertTrue(message("reset:1s").contains("takes no ':' parameter"), message("reset:1s"));
    }

    private static String message(final String fault)
    {
        return assertThrows(IllegalArgumentException.class, () -> RequestFault.parse(fault)).getMessage();
    }

    @Test
    void shouldDrawFaultsAtTheRateFromTheTypes()
    {
        final FaultMix mix = FaultMix.of(25, "rate_limit server_error,reset@2");
        assertEquals(3, mix.faults().size());
        assertEquals(6, FaultMix.of(10, null).faults().size(), "llm-d's six by default");
        final SeededRandom random = new SeededRandom(42);
        int drawn = 0;
        final int[] byKind = new int[RequestFault.Kind.values().length];
        for (int i = 0; i < 20_000; i++)
        {
            final RequestFault fault = mix.draw(random);
            if (null != fault)
            {
                drawn++;
                byKind[fault.kind().ordinal()]++;
            }
        }
        assertEquals(5_000, drawn, 300, "25% of requests");
        assertEquals(drawn / 3.0, byKind[RequestFault.Kind.RESET.ordinal()], 200, "equal chance");
        assertNull(FaultMix.NONE.draw(random));
        assertThrows(IllegalArgumentException.class, () -> FaultMix.of(101, null));
        assertThrows(IllegalArgumentException.class, () -> FaultMix.of(-1, null));
    }

    @Test
    void shouldReadTheScheduleFile()
    {
        final FaultSchedule schedule = FaultSchedule.parse(List.of(
            "# a comment",
            "t=60s instance 3 unhealthy for 20s",
            "",
            "t=90s all stall for 2s   # trailing comment",
            "t=2m down",
            "t=10s instance 0 failures 30% rate_limit,reset@5 for 30s",
            "t=5s kv-events drop for 5s",
            "t=5s kv-events delay 250ms",
            "t=1s die"), "faults.txt");
        final List<FaultSchedule.Event> events = schedule.events();
        assertEquals(7, events.size());
        assertEquals(new FaultSchedule.Event(60_000_000_000L, 3, FaultSchedule.Action.UNHEALTHY, 20_000_000_000L,
            FaultMix.NONE, 0, 2), events.get(0));
        assertTrue(events.get(0).hits(3) && !events.get(0).hits(2));
        assertTrue(events.get(1).hits(7), "all instances");
        assertEquals(92_000_000_000L, events.get(1).endNs());
        assertEquals(Long.MAX_VALUE, events.get(2).endNs(), "no 'for': until the end");
        assertEquals(30.0, events.get(3).mix().ratePercent());
        assertEquals(2, events.get(3).mix().faults().size());
        assertEquals(FaultSchedule.Action.KV_EVENTS_DROP, events.get(4).action());
        assertEquals(250_000_000L, events.get(5).delayNs());
        assertTrue(schedule.has(FaultSchedule.Action.DIE));
    }

    @Test
    void shouldNameFileAndLineOfABadScheduleLine()
    {
        assertEquals("f.txt:2: unknown fault 'explode' (expected unhealthy, down, stall, failures, kv-events, die " +
            "or dead)", scheduleError("t=1s down", "t=2s explode"));
        assertTrue(scheduleError("60s down").startsWith("f.txt:1: a line starts with t=DURATION"));
        assertTrue(scheduleError("t=1s instance x down").contains("'instance' needs an index >= 0, got 'x'"));
        assertTrue(scheduleError("t=1s down now").contains("'down' takes no arguments"));
        assertTrue(scheduleError("t=1s failures lots").contains("needs a share"));
        assertTrue(scheduleError("t=1s failures 5% bogus").contains("unknown fault 'bogus'"));
        assertTrue(scheduleError("t=1s kv-events lose").contains("expected 'kv-events drop'"));
        assertTrue(scheduleError("t=soon down").startsWith("f.txt:1: t=: "));
        assertTrue(scheduleError("t=1s").contains("missing the fault"));
    }

    private static String scheduleError(final String... lines)
    {
        return assertThrows(IllegalArgumentException.class, () -> FaultSchedule.parse(List.of(lines), "f.txt"))
            .getMessage();
    }
}
