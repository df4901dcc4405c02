package dev.tapedeck.nixl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The {@code nixl} plane against the test-only fake {@code libnixl_capi.so} (src/test/native; in-process agents, READ
 * = memcpy), which exercises the shim's NIXL backend and the plane end to end; and, only where a real libnixl is
 * installed, the factory opening the {@code nixl} plane over it in a child JVM.
 */
class NixlDataPlaneTest
{
    private static final int BLOCKS = 16;
    private static final int BLOCK_BYTES = 32 * 1024;
    private static final long WAIT_MS = 20_000;

    private static void assumeFakeNixl()
    {
        final String fake = System.getProperty("kvbridge.test.fakeNixl", "");
        final String libraryReason = KvBridgeNative.libraryPath().isPresent() ? null :
            "libkvbridge.so unavailable: " + KvBridgeNative.unavailableReason();
        final String reason = libraryReason != null ? libraryReason : fake.isEmpty() || !Files.isRegularFile(
            Path.of(fake)) ? "the fake libnixl_capi.so was not built (" + fake + ")" : null;
        if (reason != null)
        {
            System.out.println("skipping: " + reason);
        }
        assumeTrue(reason == null, reason);
        System.setProperty(KvBridgeNative.NIXL_LIB_PROPERTY, fake);
        assertEquals(null, KvBridgeNative.nixlUnavailableReason());
    }

    private static KvDataPlaneSettings settings(final String engineId)
    {
        return new KvDataPlaneSettings("nixl", engineId, BLOCKS, BLOCK_BYTES, "127.0.0.1");
    }

    @Test
    void readsBlocksAndDeliversNotificationsThroughTheNixlCApi() throws Exception
    {
        assumeFakeNixl();
        try (NixlDataPlane prefill = new NixlDataPlane(settings("nixl-prefill"));
            NixlDataPlane decode = new NixlDataPlane(settings("nixl-decode")))
        {
            assertEquals("nixl", decode.kind());
            final int[] remote = {2, 5, 9};
            for (int i = 0; i < remote.length; i++)
            {
                KvBlockPattern.fill(prefill.pool().block(remote[i]), KvBlockPattern.seed("req-1", i));
            }
            final KvPeer peer = decode.addPeer("nixl-prefill", prefill.agentMetadata())
                .get(WAIT_MS, TimeUnit.MILLISECONDS);

            final PullResult result = decode.read(peer, remote, new int[] {0, 1, 2},
                "req-1:1".getBytes(StandardCharsets.UTF_8)).get(WAIT_MS, TimeUnit.MILLISECONDS);

            assertEquals(3L * BLOCK_BYTES, result.bytes());
            for (int i = 0; i < remote.length; i++)
            {
                assertEquals(-1, KvBlockPattern.firstMismatch(decode.pool().block(i),
                    KvBlockPattern.seed("req-1", i)), "block " + i);
            }
            assertEquals(List.of("req-1:1"), UcxDataPlaneTest.awaitNotifications(prefill, 1));
            decode.notify(peer, "req-2:1".getBytes(StandardCharsets.UTF_8)).get(WAIT_MS, TimeUnit.MILLISECONDS);
            assertEquals(List.of("req-2:1"), UcxDataPlaneTest.awaitNotifications(prefill, 1));
            assertEquals(List.of(), UcxDataPlaneTest.awaitNotifications(decode, 0));
        }
    }

    @Test
    void aPlaneThatCannotOpenSaysWhyAndLeavesNoThread()
    {
        assumeFakeNixl();
        try (NixlDataPlane first = new NixlDataPlane(settings("nixl-twice")))
        {
            final KvTransferException ex = assertThrows(KvTransferException.class,
                () -> new NixlDataPlane(settings("nixl-twice")).close());
            assertTrue(ex.getMessage().contains("nixl_capi_create_agent(nixl-twice) failed"), ex.getMessage());
            assertEquals(1, Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().equals("kv-io-nixl-twice") && thread.isAlive()).count());
            assertEquals("nixl", first.kind());
        }
    }

    @Test
    void aPeerThatWentAwayFailsTheRead() throws Exception
    {
        assumeFakeNixl();
        try (NixlDataPlane decode = new NixlDataPlane(settings("nixl-decode-2")))
        {
            final KvPeer peer;
            try (NixlDataPlane prefill = new NixlDataPlane(settings("nixl-prefill-2")))
            {
                peer = decode.addPeer("nixl-prefill-2", prefill.agentMetadata()).get(WAIT_MS, TimeUnit.MILLISECONDS);
            }
            final ExecutionException ex = assertThrows(ExecutionException.class, () -> decode.read(peer,
                new int[] {1}, new int[] {1}, new byte[0]).get(WAIT_MS, TimeUnit.MILLISECONDS));
            assertInstanceOf(KvTransferException.class, ex.getCause());
            assertTrue(ex.getCause().getMessage().contains("failed"), ex.getCause().getMessage());
        }
    }

    @Test
    void opensOverARealLibnixlWhereOneIsInstalled() throws Exception
    {
        final Optional<Path> real = realLibnixl();
        if (real.isEmpty())
        {
            System.out.println("skipping: no real libnixl_capi.so under $NIXL_PREFIX/lib* or " +
                "/opt/nvidia/nvda_nixl/lib*");
        }
        assumeTrue(real.isPresent(), "no real libnixl_capi.so installed");
        assumeTrue(KvBridgeNative.libraryPath().isPresent(), "libkvbridge.so unavailable");
        try (ChildJvm child = ChildJvm.start(List.of(ChildJvm.bridgeLibraryProperty(),
            "-D" + KvBridgeNative.NIXL_LIB_PROPERTY + "=" + real.get()), Map.of(), "factory", "nixl"))
        {
            assertEquals("nixl", child.awaitLine("PLANE ", 60_000), child.describe());
            assertEquals(0, child.waitFor(60_000), child.describe());
        }
    }

    private static Optional<Path> realLibnixl()
    {
        final String prefix = System.getenv("NIXL_PREFIX");
        return Stream.of(prefix == null ? null : Path.of(prefix), Path.of("/opt/nvidia/nvda_nixl"))
            .filter(p -> p != null)
            .flatMap(p -> Stream.of("lib", "lib64", "lib/x86_64-linux-gnu").map(d -> p.resolve(d)
                .resolve("libnixl_capi.so")))
            .filter(Files::isRegularFile)
            .findFirst();
    }
}
