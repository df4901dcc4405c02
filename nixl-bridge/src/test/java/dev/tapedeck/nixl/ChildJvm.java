package dev.tapedeck.nixl;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link KvPlaneChildMain} in a child JVM: its stdout lines are collected by a reader thread, its stderr goes to a
 * file shown in failure messages.
 * <p>
 * Used by one test thread; the reader thread only fills the line queue.
 */
final class ChildJvm implements AutoCloseable
{
    private static final String EOF = "\u0000EOF";

    private final Process process;
    private final Path stderr;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = new ArrayList<>();

    private ChildJvm(final Process process, final Path stderr)
    {
        this.process = process;
        this.stderr = stderr;
        final Thread reader = new Thread(this::readLines, "child-stdout-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * @param jvmArgs extra JVM options (system properties).
     * @param env variables to set (a null value removes the variable).
     * @param args {@link KvPlaneChildMain}'s arguments.
     * @return the started child.
     * @throws IOException when it cannot start.
     */
    static ChildJvm start(final List<String> jvmArgs, final Map<String, String> env, final String... args)
        throws IOException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--add-opens");
        command.add("java.base/jdk.internal.misc=ALL-UNNAMED");
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-Xmx256m");
        command.add("-XX:-CreateCoredumpOnCrash");
        command.add("-XX:ErrorFile=" + Path.of(System.getProperty("java.io.tmpdir"), "kv-child-hs_err_%p.log"));
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(KvPlaneChildMain.class.getName());
        command.addAll(List.of(args));
        final ProcessBuilder builder = new ProcessBuilder(command);
        for (final Map.Entry<String, String> entry : env.entrySet())
        {
            if (entry.getValue() == null)
            {
                builder.environment().remove(entry.getKey());
            }
            else
            {
                builder.environment().put(entry.getKey(), entry.getValue());
            }
        }
        final Path stderr = Files.createTempFile("kv-child-", ".err");
        builder.redirectError(stderr.toFile());
        return new ChildJvm(builder.start(), stderr);
    }

    /**
     * @return {@code -Dkvbridge.lib=} naming the library this JVM loaded.
     */
    static String bridgeLibraryProperty()
    {
        return "-D" + KvBridgeNative.LIB_PROPERTY + "=" + KvBridgeNative.libraryPath().orElseThrow();
    }

    private void readLines()
    {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8)))
        {
            for (String line = in.readLine(); line != null; line = in.readLine())
            {
                lines.add(line);
            }
            lines.add(EOF);
        }
        catch (final IOException ex)
        {
            lines.add("READ-FAILED " + ex);
            lines.add(EOF);
        }
    }

    /**
     * @param prefix what the line starts with.
     * @param timeoutMs how long to wait.
     * @return the line, without the prefix.
     * @throws AssertionError when none came in time.
     * @throws InterruptedException when interrupted.
     */
    String awaitLine(final String prefix, final long timeoutMs) throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true)
        {
            final String line = lines.poll(Math.max(0, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (EOF.equals(line))
            {
                lines.add(EOF);
                throw new AssertionError("the child closed stdout before a line starting with '" + prefix + "'; " +
                    describe());
            }
            if (line == null)
            {
                throw new AssertionError("no line starting with '" + prefix + "' within " + timeoutMs + " ms; " +
                    describe());
            }
            seen.add(line);
            if (line.startsWith(prefix))
            {
                return line.substring(prefix.length());
            }
        }
    }

    /**
     * @return the lines seen so far and the child's stderr, for failure messages.
     */
    String describe()
    {
        return "child stdout so far " + seen + ", alive " + process.isAlive() + ", stderr:\n" + stderr();
    }

    /**
     * @return what the child wrote to stderr so far.
     */
    String stderr()
    {
        try
        {
            return Files.readString(stderr);
        }
        catch (final IOException ex)
        {
            return "(unreadable: " + ex + ")";
        }
    }

    /**
     * Closes the child's stdin (the prefill's signal to stop).
     *
     * @throws IOException when it cannot.
     */
    void closeStdin() throws IOException
    {
        process.getOutputStream().close();
    }

    /**
     * @param timeoutMs how long to wait.
     * @return the exit code.
     * @throws InterruptedException when interrupted.
     */
    int waitFor(final long timeoutMs) throws InterruptedException
    {
        if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS))
        {
            throw new AssertionError("the child did not exit within " + timeoutMs + " ms; " + describe());
        }
        return process.exitValue();
    }

    /**
     * Sends the child a signal with {@code kill}; after {@code STOP}, waits until every thread of the child is stopped
     * (a stop takes effect on each thread as it is next scheduled: on a busy machine a thread may still run briefly
     * after {@code kill} returns).
     *
     * @param signal e.g. {@code STOP}, {@code CONT}.
     * @throws Exception when {@code kill} fails or the child does not stop within 5 s.
     */
    void signal(final String signal) throws Exception
    {
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0)
        {
            throw new AssertionError("kill -" + signal + " " + process.pid() + " failed");
        }
        if ("STOP".equals(signal))
        {
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!allThreadsStopped())
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw new AssertionError("child " + process.pid() + " not stopped 5 s after kill -STOP");
                }
                Thread.sleep(5);
            }
        }
    }

    private boolean allThreadsStopped() throws IOException
    {
        final Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
        try (java.util.stream.Stream<Path> threads = Files.list(tasks))
        {
            return threads.allMatch(thread ->
            {
                try
                {
                    final String stat = Files.readString(thread.resolve("stat"));
                    // the state follows the command name in parentheses: "T" stopped, "t" traced
                    final char state = stat.charAt(stat.lastIndexOf(')') + 2);
                    return 'T' == state || 't' == state;
                }
                catch (final IOException gone)
                {
                    return true; // the thread exited
                }
            });
        }
    }

    /**
     * Kills the child (SIGKILL) and waits for it.
     *
     * @throws InterruptedException when interrupted.
     */
    void kill() throws InterruptedException
    {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws IOException
    {
        process.destroyForcibly();
        Files.deleteIfExists(stderr);
    }
}
