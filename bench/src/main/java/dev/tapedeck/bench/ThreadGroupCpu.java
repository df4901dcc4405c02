package dev.tapedeck.bench;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Locale;

/**
 * CPU time of this JVM's threads by group, from the kernel's per-thread {@code schedstat} under
 * {@code /proc/self/task}, which sees the threads the JVM's thread bean does not (garbage collection, JIT compilers):
 * the sending thread (a play engine, {@code tapedeck-engine-*}, or {@code EngineCoreScaleBench}'s raw sender), the
 * ZeroMQ I/O threads of every context ({@code iothread-*}), the receiver (the thread that runs {@code main} and counts
 * the messages: {@code java}, as the launcher names it, or {@code main}), garbage collection, the JIT compilers, and
 * the rest.
 * <p>
 * Stateless; call from any thread.
 */
final class ThreadGroupCpu
{
    static final String[] NAMES = {"sending", "ZeroMQ I/O threads", "receiver", "GC", "JIT", "other"};

    private ThreadGroupCpu()
    {
    }

    /** Told of one thread: its name and, from {@code schedstat}, its time on a CPU and waiting for one. */
    interface ThreadTimes
    {
        void thread(String name, long ranNs, long waitedNs);
    }

    /**
     * Read the name and {@code schedstat} of every thread of a process; a thread that ends meanwhile is skipped.
     *
     * @param pid the process id, or {@code self}.
     * @param visitor told of each thread.
     * @return false where {@code /proc} has no such figures (not Linux, or the process is gone).
     */
    static boolean eachThread(final String pid, final ThreadTimes visitor)
    {
        final File[] tasks = new File("/proc/" + pid + "/task").listFiles();
        if (null == tasks)
        {
            return false;
        }
        for (final File task : tasks)
        {
            try
            {
                final String name = Files.readString(task.toPath().resolve("comm")).trim();
                final String[] schedstat = Files.readString(task.toPath().resolve("schedstat")).trim().split(" ");
                visitor.thread(name, Long.parseLong(schedstat[0]), Long.parseLong(schedstat[1]));
            }
            catch (final IOException | RuntimeException ended)
            {
                // the thread ended between the listing and the read
            }
        }
        return true;
    }

    /**
     * @return each group's CPU time so far in nanoseconds, in {@link #NAMES}' order; all -1 where {@code /proc} has
     *     no such figures (not Linux).
     */
    static long[] sample()
    {
        final long[] ns = new long[NAMES.length];
        if (!eachThread("self", (name, ranNs, waitedNs) -> ns[group(name)] += ranNs))
        {
            java.util.Arrays.fill(ns, -1);
        }
        return ns;
    }

    private static int group(final String name)
    {
        if (name.startsWith("tapedeck-engine") || name.startsWith("raw-sender"))
        {
            return 0;
        }
        if (name.startsWith("iothread"))
        {
            return 1;
        }
        if ("main".equals(name) || "java".equals(name))
        {
            return 2;
        }
        if (name.startsWith("GC Thread") || name.startsWith("G1 "))
        {
            return 3;
        }
        if (name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler"))
        {
            return 4;
        }
        return 5;
    }

    /**
     * @param before a {@link #sample()} at the window's start.
     * @param after a {@link #sample()} at its end.
     * @param messages messages in the window.
     * @return each group's CPU per message over the window in microseconds, in {@link #NAMES}' order; NaN where
     *     {@code /proc} has no figures.
     */
    static double[] perMessageUs(final long[] before, final long[] after, final long messages)
    {
        final double[] us = new double[NAMES.length];
        for (int g = 0; g < NAMES.length; g++)
        {
            us[g] = before[g] < 0 ? Double.NaN : (after[g] - before[g]) / 1e3 / Math.max(1, messages);
        }
        return us;
    }

    /** A markdown row of the groups' figures, {@code figures[from]} on, one decimal. */
    static String row(final int round, final String contention, final String path, final double[] figures,
        final int from)
    {
        final StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "| %d | %s | %s |", round, contention,
            path));
        for (int g = 0; g < NAMES.length; g++)
        {
            row.append(String.format(Locale.ROOT, " %.1f |", figures[from + g]));
        }
        return row.append('\n').toString();
    }
}
