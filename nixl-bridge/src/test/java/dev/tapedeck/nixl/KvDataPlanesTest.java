package dev.tapedeck.nixl;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KvDataPlanesTest
{
    @Test
    void tcpOpensTheTcpPlane()
    {
        final KvDataPlanes.Opened opened = KvDataPlanes.open(new KvDataPlaneSettings("tcp", "e", 4, 64,
            "127.0.0.1"));
        try (KvDataPlane plane = opened.plane())
        {
            assertInstanceOf(TcpDataPlane.class, plane);
            assertTrue(opened.fallbacks().isEmpty(), opened.fallbacks().toString());
        }
    }

    @Test
    void aTcpPlaneThatCannotBindFallsOverToNoopWithTheReason()
    {
        // 192.0.2.1 (TEST-NET-1) is no address of this machine, so the bind fails
        final KvDataPlanes.Opened opened = KvDataPlanes.open(new KvDataPlaneSettings("tcp", "e", 4, 64,
            "192.0.2.1"));
        try (KvDataPlane plane = opened.plane())
        {
            assertEquals("noop", plane.kind());
            assertEquals(1, opened.fallbacks().size());
            final String reason = opened.fallbacks().get(0);
            assertTrue(reason.startsWith("KV data plane tcp unavailable (tcp plane: cannot listen on 192.0.2.1"),
                reason);
        }
    }
}
