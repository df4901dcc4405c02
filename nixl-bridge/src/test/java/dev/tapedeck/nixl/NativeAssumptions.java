package dev.tapedeck.nixl;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Skips a test, printing why, when {@code libkvbridge.so} or UCX is not available here (a build without libucx-dev).
 * <p>
 * Stateless; thread safe.
 */
final class NativeAssumptions
{
    private NativeAssumptions()
    {
    }

    /**
     * Skips the calling test unless the {@code ucx} plane can start.
     */
    static void assumeUcx()
    {
        final String reason = KvBridgeNative.unavailableReason();
        if (reason != null)
        {
            System.out.println("skipping: kvbridge/UCX unavailable: " + reason);
        }
        assumeTrue(reason == null, () -> "kvbridge/UCX unavailable: " + reason);
    }
}
