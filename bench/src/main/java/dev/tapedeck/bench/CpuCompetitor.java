package dev.tapedeck.bench;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A CPU competitor for the scale benchmarks: a separate process whose threads spin on arithmetic, as a router or a
 * gateway under test competes for the cores beside the server. {@link #start} launches it, pinned with
 * {@code taskset} to the given CPUs where {@code taskset} exists; {@link #stop} ends it. Alone:
 * {@code java -cp benchmarks.jar dev.tapedeck.bench.CpuCompetitor [threads=1] [pid to outlive not]}: with a pid (a
 * benchmark script's own, {@code bench/scripts/competitor.sh}) it exits within half a second of that process.
 * <p>
 * Called from the benchmark's main thread.
 */
public final class CpuCompetitor
{
    private static volatile long sink;

    private CpuCompetitor()
    {
    }

    /**
     * Spin.
     *
     * @param args busy threads (default 1), and optionally the pid whose end ends this process.
     * @throws InterruptedException if interrupted while watching.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        final int threads = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        for (int t = 0; t < threads; t++)
        {
            final Thread spinner = new Thread(CpuCompetitor::spin, "busy-" + t);
            spinner.setDaemon(args.length > 1);
            spinner.start();
        }
        if (args.length > 1)
        {
            final ProcessHandle watched = ProcessHandle.of(Long.parseLong(args[1])).orElse(null);
            while (null != watched && watched.isAlive())
            {
                Thread.sleep(500);
            }
        }
    }

    private static void spin()
    {
        long x = Thread.currentThread().getId();
        while (true)
        {
            for (int i = 0; i < 1_000_000; i++)
            {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            sink = x;
        }
    }

    /**
     * @param threads busy threads; 0 for none.
     * @param cpus the CPUs to pin them to ({@code taskset -c} syntax), empty for anywhere.
     * @return what the competitor is, for the report.
     */
    public static String describe(final int threads, final String cpus)
    {
        if (0 == threads)
        {
            return "quiet";
        }
        return "contended (" + threads + " busy thread" + (1 == threads ? "" : "s") +
            (cpus.isEmpty() || !tasksetAvailable() ? "" : " on CPU " + cpus) + ")";
    }

    /**
     * @param threads busy threads; 0 starts nothing.
     * @param cpus the CPUs to pin them to, empty for anywhere.
     * @return the competitor process, or null for none.
     * @throws IOException if it cannot be started.
     */
    public static Process start(final int threads, final String cpus) throws IOException
    {
        if (threads <= 0)
        {
            return null;
        }
        final List<String> command = new ArrayList<>();
        if (!cpus.isEmpty() && tasksetAvailable())
        {
            command.addAll(List.of("taskset", "-c", cpus));
        }
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // the benchmark's own pid: the competitor ends with it even when the benchmark is killed
        command.addAll(List.of("-cp", CpuCompetitor.class.getProtectionDomain().getCodeSource().getLocation()
            .getPath(), CpuCompetitor.class.getName(), Integer.toString(threads),
            Long.toString(ProcessHandle.current().pid())));
        return new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    /**
     * @param competitor what {@link #start} returned (null is fine).
     * @throws InterruptedException if interrupted while it ends.
     */
    public static void stop(final Process competitor) throws InterruptedException
    {
        if (null != competitor)
        {
            competitor.destroyForcibly();
            competitor.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static boolean tasksetAvailable()
    {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "taskset")))
            {
                return true;
            }
        }
        return false;
    }
}
