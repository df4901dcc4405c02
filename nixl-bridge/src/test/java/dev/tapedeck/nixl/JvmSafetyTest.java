package dev.tapedeck.nixl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * The hazard libkvbridge exists to avoid: a libucs loaded the ordinary way installs a SIGSEGV handler, and the JVM
 * dies on the first implicit null check its JIT-compiled code takes. A child JVM opens a ucx plane, then takes
 * thousands of such NPEs, and must survive them without UCX's handler ever seeing one (with
 * {@code UCX_ERROR_SIGNALS=SIGSEGV} set by the user, it does: "Caught signal 11" on stderr).
 */
class JvmSafetyTest
{
    @Test
    void aJvmWithTheBridgeLoadedSurvivesImplicitNullChecks() throws Exception
    {
        NativeAssumptions.assumeUcx();
        final Map<String, String> env = new HashMap<>();
        env.put("UCX_ERROR_SIGNALS", null);
        try (ChildJvm child = ChildJvm.start(List.of(ChildJvm.bridgeLibraryProperty()),
            env, "npe"))
        {
            assertTrue(child.awaitLine("OPENED ", 60_000).startsWith("ucx kvb 1 / ucp "), child.describe());
            final String npes = child.awaitLine("NPES ", 120_000);
            assertEquals(0, child.waitFor(60_000), child.describe());
            final long count = Long.parseLong(npes.substring(0, npes.indexOf(' ')));
            assertEquals(4_883, count, child.describe());
            assertFalse(child.stderr().contains("Caught signal"), "UCX handled a JVM signal: " + child.describe());
        }
    }
}
