package dev.tapedeck.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What {@code load}'s exit code tells a script, from the run's report: 1 when nothing was sent, when nothing succeeded,
 * or when more failed than {@code --max-failure-rate} allows; else 0.
 */
class LoadExitCodeTest
{
    private static JsonNode report(final long sent, final long completed, final long failed) throws Exception
    {
        return new ObjectMapper().readTree("{\"points\":[{\"requests\":{\"sent\":" + sent + ",\"completed\":" +
            completed + ",\"failed\":" + failed + "},\"errors\":" + (failed > 0 ? "{\"http_400\":" + failed + "}" :
            "{}") + "}]}");
    }

    @Test
    void shouldExitNonZeroWhenNothingRanOrNothingSucceeded() throws Exception
    {
        assertEquals(1, LoadCommand.exitCode(report(0, 0, 0), null), "no request was sent");
        assertEquals(1, LoadCommand.exitCode(report(10, 0, 10), null), "all failed");
        assertEquals(0, LoadCommand.exitCode(report(10, 1, 9), null), "by default, one success is a run");
    }

    @Test
    void shouldExitNonZeroAboveTheFailureRateGiven() throws Exception
    {
        assertEquals(1, LoadCommand.exitCode(report(10, 8, 2), 0.1), "20% failed, 10% allowed");
        assertEquals(0, LoadCommand.exitCode(report(10, 8, 2), 0.2), "20% failed, 20% allowed");
        assertEquals(1, LoadCommand.exitCode(report(10, 9, 1), 0.0), "0 allows no failure");
        assertEquals(0, LoadCommand.exitCode(report(10, 10, 0), 0.0));
    }
}
