package dev.tapedeck.http;

import java.util.concurrent.TimeUnit;

/**
 * How long an HTTP connection may hold the server without doing work, and how many may be open at once. Immutable.
 *
 * @param keepAliveTimeoutNs an idle connection (no request being read, none being answered) is closed after this
 *     ({@code --http-keep-alive-timeout}; vLLM's server uses 5 s); 0 for never.
 * @param readTimeoutNs a request's head and body must arrive within this from its first byte, else it gets 408 and
 *     the connection is closed ({@code --http-read-timeout}); 0 for never.
 * @param maxConnections open connections of the whole server beyond which a new one gets 503 and is closed
 *     ({@code --max-connections}); 0 for no cap.
 */
public record ConnectionLimits(long keepAliveTimeoutNs, long readTimeoutNs, int maxConnections)
{
    /** No timeouts, no cap. */
    public static final ConnectionLimits NONE = new ConnectionLimits(0, 0, 0);

    /** Open file descriptors kept for the engine, the KV-event sockets and the files a run writes. */
    private static final long RESERVED_FDS = 256;

    /**
     * Validates the values.
     */
    public ConnectionLimits
    {
        if (keepAliveTimeoutNs < 0 || readTimeoutNs < 0 || maxConnections < 0)
        {
            throw new IllegalArgumentException("--http-keep-alive-timeout, --http-read-timeout and --max-connections " +
                "must not be negative");
        }
    }

    /**
     * @return vLLM's keep-alive timeout (5 s), a 30 s read timeout and a cap below this process's file-descriptor
     *     limit ({@link #defaultMaxConnections()}).
     */
    public static ConnectionLimits defaults()
    {
        return new ConnectionLimits(TimeUnit.SECONDS.toNanos(5), TimeUnit.SECONDS.toNanos(30),
            defaultMaxConnections());
    }

    /**
     * @return this process's open-file limit less {@value #RESERVED_FDS} (at least 64), so that accepting never runs
     *     the process out of descriptors; 0 (no cap) where the limit cannot be read.
     */
    public static int defaultMaxConnections()
    {
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean() instanceof
            final com.sun.management.UnixOperatingSystemMXBean unix)
        {
            final long limit = unix.getMaxFileDescriptorCount();
            return (int)Math.min(Integer.MAX_VALUE, Math.max(64, limit - RESERVED_FDS));
        }
        return 0;
    }
}
