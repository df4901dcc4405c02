package dev.tapedeck.nixl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class KvBridgeNativeTest
{
    @Test
    void versionNamesTheUcxItOpened()
    {
        NativeAssumptions.assumeUcx();
        final String version = KvBridgeNative.version();
        System.out.println("kvbridge version: " + version);
        assertTrue(version.startsWith("kvb 1 / ucp "), version);
        assertTrue(version.contains("1.13"), version);
        assertTrue(KvBridgeNative.libraryPath().isPresent());
    }

    @Test
    void theFactoryOpensUcxWhenAskedAndTheBridgeLoads() throws Exception
    {
        NativeAssumptions.assumeUcx();
        try (ChildJvm child = ChildJvm.start(List.of(ChildJvm.bridgeLibraryProperty()), Map.of(), "factory", "ucx"))
        {
            assertEquals("ucx", child.awaitLine("PLANE ", 30_000), child.describe());
            assertEquals(0, child.waitFor(30_000), child.describe());
        }
    }

    @Test
    void theFactoryFallsFromNixlToUcxWhereLibnixlIsMissing() throws Exception
    {
        NativeAssumptions.assumeUcx();
        try (ChildJvm child = ChildJvm.start(List.of(ChildJvm.bridgeLibraryProperty(),
            "-D" + KvBridgeNative.NIXL_LIB_PROPERTY + "=/nonexistent/libnixl_capi.so"), Map.of(), "factory", "nixl"))
        {
            assertEquals("ucx", child.awaitLine("PLANE ", 30_000), child.describe());
            final String fallback = child.awaitLine("FALLBACK ", 30_000);
            assertTrue(fallback.startsWith("KV data plane nixl unavailable (NIXL unavailable: cannot dlopen") &&
                fallback.contains("/nonexistent/libnixl_capi.so"), fallback);
            assertEquals(0, child.waitFor(30_000), child.describe());
        }
    }

    @Test
    void theFactoryFallsOverWhenTheBridgeLibraryIsMissing() throws Exception
    {
        try (ChildJvm child = ChildJvm.start(List.of("-D" + KvBridgeNative.LIB_PROPERTY + "=/nonexistent"), Map.of(),
            "factory", "ucx"))
        {
            assertEquals("tcp", child.awaitLine("PLANE ", 30_000), child.describe());
            final String fallback = child.awaitLine("FALLBACK ", 30_000);
            assertTrue(fallback.startsWith("KV data plane ucx unavailable") && fallback.contains("/nonexistent"),
                fallback);
            assertEquals(0, child.waitFor(30_000), child.describe());
        }
    }
}
