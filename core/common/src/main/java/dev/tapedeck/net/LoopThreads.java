package dev.tapedeck.net;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.util.concurrent.FastThreadLocalThread;

/**
 * Names event-loop threads {@code <prefix>-<n>} (n from 0), so that {@code top -H}, {@code perf sched} and
 * {@code taskset}/{@code renice} by thread can tell the server's loops ({@code tapedeck-http-n}) from the load
 * client's ({@code tapedeck-load-n}): Linux keeps the first 15 characters of a thread's name. Threads are Netty
 * {@link FastThreadLocalThread}s, as Netty's own factory makes. Thread-safe.
 */
public final class LoopThreads implements ThreadFactory
{
    private final String prefix;
    private final AtomicInteger next = new AtomicInteger();

    /**
     * @param prefix name before {@code -n}.
     */
    public LoopThreads(final String prefix)
    {
        this.prefix = prefix;
    }

    @Override
    public Thread newThread(final Runnable task)
    {
        return new FastThreadLocalThread(task, prefix + "-" + next.getAndIncrement());
    }
}
