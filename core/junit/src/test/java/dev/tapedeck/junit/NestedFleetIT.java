package dev.tapedeck.junit;

import java.net.URI;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A fleet on a static field serves the class and every {@code @Nested} class in it: JUnit calls its beforeAll and
 * afterAll again for each nested class, and the fleet must neither stop after the first nor restart on new ports.
 */
class NestedFleetIT
{
    @RegisterExtension
    static TapedeckFleet fleet = TapedeckFleet.builder().build();

    private static URI first;

    @BeforeAll
    static void remember()
    {
        first = fleet.baseUrl(0);
    }

    @Test
    void theOuterClassSeesTheFleet()
    {
        assertEquals(first, fleet.baseUrl(0));
    }

    @Nested
    class One
    {
        @Test
        void seesTheSameFleet()
        {
            assertEquals(first, fleet.baseUrl(0));
            assertEquals(0.0, fleet.scrapeMetrics(0).sum("vllm:request_success_total"));
        }
    }

    @Nested
    class Two
    {
        @Test
        void stillSeesTheSameFleet()
        {
            assertEquals(first, fleet.baseUrl(0), "not restarted after the first nested class");
            assertEquals(0.0, fleet.scrapeMetrics(0).sum("vllm:request_success_total"));
        }
    }
}
