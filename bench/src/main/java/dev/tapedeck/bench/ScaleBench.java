package dev.tapedeck.bench;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * End-to-end scale run: {@code tapedeck serve} (a real process) driven by {@link SseLoadClient} at each concurrency,
 * then {@link BareSseServer} (the ceiling) driven the same way on the same schedule and with the same capacity
 * (tapedeck's KV cache holds every stream: {@link #kvBlocksFor}), each quiet and beside a
 * {@link CpuCompetitor} (a busy process pinned beside the server, as a router under test would be). What is compared
 * is what the client receives on its own clock in the window: token events per second, time to first token and
 * token lateness ({@link SseLoadClient}). The servers' own lateness counters (write time minus the model's due time)
 * are read once after the run, not from the loop under test while it is measured, and cover the whole run. Beside the
 * client, the servers' event-loop CPU over the window is read from the kernel's per-thread {@code schedstat}, per
 * 1,000 tokens received: the steadiest of the figures on a shared machine; and from the same figures, how long the
 * loop waited, runnable, for a CPU per second (likely a loopback write waking the client onto the writing server's
 * core, where it preempts the loop mid-burst). Prints a markdown table and, per contention and concurrency,
 * tapedeck's ratios to the ceiling; with {@code --rounds N}, the pair runs in ABBA order (tapedeck first in odd
 * rounds, the ceiling first in even ones) and the medians of the ratios follow.
 * <p>
 * Usage: {@code java -cp bench/target/benchmarks.jar dev.tapedeck.bench.ScaleBench [--streams 1000,10000]
 * [--warmup 10] [--measure 20] [--ttft-ms 100] [--itl-ms 50] [--max-tokens 200] [--transport auto]
 * [--contention quiet,contended] [--competitor-threads 1] [--competitor-cpus 0] [--rounds 1]
 * [--jar core/cli/target/tapedeck.jar] [--jvm-opts "flags for tapedeck's JVM, e.g. a profiler agent"]}
 */
public final class ScaleBench
{
    /** More tokens than {@link SseLoadClient}'s prompt takes under any tokenizer. */
    private static final int PROMPT_TOKENS_BOUND = 32;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private ScaleBench()
    {
    }

    /** One measured run: the client's figures in the window, the server's lateness over the run. */
    record Row(String contention, String server, int streams, SseLoadClient.Result client, long serverP99Us,
        LoopTimes loop, long windowS)
    {
        /**
         * @return the server's event loop CPU per 1,000 tokens the client received in the window, in milliseconds
         *     ({@code NaN} where the kernel's per-thread figures cannot be read).
         */
        double loopCpuMsPerKiloToken()
        {
            final double tokens = client.tokensPerSecond() * windowS;
            return loop.ranNs() < 0 || tokens <= 0 ? Double.NaN : loop.ranNs() / 1e6 / (tokens / 1000);
        }

        /**
         * @return how long the server's event loop waited, runnable, for a CPU per second of the window, in
         *     milliseconds ({@code NaN} where the kernel's per-thread figures cannot be read).
         */
        double loopWaitMsPerSecond()
        {
            return loop.waitedNs() < 0 ? Double.NaN : loop.waitedNs() / 1e6 / windowS;
        }

        long latenessUs(final double percentile)
        {
            return client.latenessNs().getValueAtPercentile(percentile) / 1000;
        }

        long ttftUs(final double percentile)
        {
            return client.ttftNs().getValueAtPercentile(percentile) / 1000;
        }
    }

    /**
     * @param args see the class documentation.
     * @throws Exception on failure.
     */
    public static void main(final String[] args) throws Exception
    {
        final List<Integer> concurrency = new ArrayList<>();
        for (final String n : arg(args, "--streams", "1000,10000").split(","))
        {
            concurrency.add(Integer.parseInt(n.trim()));
        }
        final long warmupS = Long.parseLong(arg(args, "--warmup", "10"));
        final long measureS = Long.parseLong(arg(args, "--measure", "20"));
        final int ttftMs = Integer.parseInt(arg(args, "--ttft-ms", "100"));
        final int itlMs = Integer.parseInt(arg(args, "--itl-ms", "50"));
        final int maxTokens = Integer.parseInt(arg(args, "--max-tokens", "200"));
        final String jar = arg(args, "--jar", "core/cli/target/tapedeck.jar");
        final String transport = arg(args, "--transport", "auto");
        final List<String> contentions = List.of(arg(args, "--contention", "quiet,contended").split(","));
        final int competitorThreads = Integer.parseInt(arg(args, "--competitor-threads", "1"));
        final String competitorCpus = arg(args, "--competitor-cpus", "0");
        final int rounds = Integer.parseInt(arg(args, "--rounds", "1"));
        final String jvmOptions = arg(args, "--jvm-opts", "");
        final String benchJar = ScaleBench.class.getProtectionDomain().getCodeSource().getLocation().getPath();
        final List<Row> rows = new ArrayList<>();
        int port = 18_400;
        for (int round = 0; round < rounds; round++)
        {
            for (final String contention : contentions)
            {
                final int threads = "quiet".equals(contention.trim()) ? 0 : competitorThreads;
                final String label = CpuCompetitor.describe(threads, competitorCpus) +
                    (rounds > 1 ? ", round " + (round + 1) : "");
                for (final int streams : concurrency)
                {
                    final List<String> tapedeck = new ArrayList<>(List.of("java", "--add-opens",
                        "java.base/jdk.internal.misc=ALL-UNNAMED"));
                    if (!jvmOptions.isBlank())
                    {
                        tapedeck.addAll(List.of(jvmOptions.trim().split("\\s+")));
                    }
                    tapedeck.addAll(List.of("-jar", jar, "serve", "--port",
                        Integer.toString(port), "--latency-model", "knob", "--time-to-first-token", ttftMs + "ms",
                        "--inter-token-latency", itlMs + "ms", "--max-num-seqs", Integer.toString(streams),
                        "--max-num-batched-tokens", Integer.toString(Math.max(8192, 2 * streams)),
                        "--max-waiting-queue-length", Integer.toString(2 * streams), "--max-model-len", "4096",
                        "--kv-cache-size", Integer.toString(kvBlocksFor(streams, maxTokens)),
                        // the bare server closes no idle connection; at 10,000 streams an overloaded client reads a
                        // response's end seconds after it left the server, and its next request could meet the close
                        // of the 5 s keep-alive (a reset, counted as an error the ceiling cannot have)
                        "--http-keep-alive-timeout", "0",
                        "--transport", transport));
                    final Run run = new Run(label, streams, warmupS, measureS, maxTokens, itlMs, threads,
                        competitorCpus);
                    final int tapedeckPort = port++;
                    final List<String> bare = List.of("java", "-cp", benchJar, BareSseServer.class.getName(),
                        Integer.toString(port), Integer.toString(ttftMs), Integer.toString(itlMs),
                        Integer.toString(maxTokens), transport);
                    final int barePort = port++;
                    // rows stay in pairs (tapedeck, ceiling); the order they run in alternates by round (ABBA), so
                    // that whatever the box does over time does not always favour the server measured second
                    final Row tapedeckRow;
                    final Row bareRow;
                    if (0 == round % 2)
                    {
                        tapedeckRow = measure("tapedeck serve", tapedeck, tapedeckPort, run);
                        bareRow = measure("bare Netty (ceiling)", bare, barePort, run);
                    }
                    else
                    {
                        bareRow = measure("bare Netty (ceiling)", bare, barePort, run);
                        tapedeckRow = measure("tapedeck serve", tapedeck, tapedeckPort, run);
                    }
                    rows.add(tapedeckRow);
                    rows.add(bareRow);
                }
            }
        }
        System.out.println();
        System.out.println("Scale run " + LocalDate.now() + " on " + machine() + "; TTFT " + ttftMs + " ms, ITL " +
            itlMs + " ms, " + maxTokens + " tokens per request, transport " + transport + ", warm-up " + warmupS +
            " s, window " + measureS + " s");
        System.out.println();
        System.out.println("Client-side figures in the window; server lateness read after the run (whole run).");
        System.out.println();
        System.out.println("| contention | server | streams | errors | completed | tokens/s (client) | events/s | " +
            "lateness p50 | lateness p99 | lateness max | TTFT p50 | TTFT p99 | server lateness p99 | " +
            "loop CPU per 1k tokens | loop waited for a CPU |");
        System.out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (final Row row : rows)
        {
            System.out.println(String.format(Locale.ROOT,
                "| %s | %s | %,d | %d | %,d | %,.0f | %,.0f | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | " +
                "%.2f ms | %.2f ms | %.1f ms/s |", row.contention(), row.server(), row.streams(),
                row.client().errors(),
                row.client().completed(), row.client().tokensPerSecond(), row.client().eventsPerSecond(),
                row.latenessUs(50) / 1000.0, row.latenessUs(99) / 1000.0,
                row.latenessUs(100) / 1000.0, row.ttftUs(50) / 1000.0, row.ttftUs(99) / 1000.0,
                row.serverP99Us() / 1000.0, row.loopCpuMsPerKiloToken(), row.loopWaitMsPerSecond()));
        }
        printRatios(rows, rounds);
    }

    /** Each pair's ratios to the ceiling and, over several rounds, their medians. */
    private static void printRatios(final List<Row> rows, final int rounds)
    {
        System.out.println();
        for (int i = 0; i + 1 < rows.size(); i += 2)
        {
            final Row tapedeck = rows.get(i);
            final Row ceiling = rows.get(i + 1);
            System.out.println(String.format(Locale.ROOT, "%s, %,d streams: tapedeck/ceiling tokens/s %.2fx, " +
                "lateness p99 %.2fx, TTFT p99 %.2fx, loop CPU per token %.2fx; loops waited for a CPU %.0f and " +
                "%.0f ms/s", tapedeck.contention(), tapedeck.streams(),
                tapedeck.client().tokensPerSecond() / ceiling.client().tokensPerSecond(),
                ratio(tapedeck.latenessUs(99), ceiling.latenessUs(99)), ratio(tapedeck.ttftUs(99),
                ceiling.ttftUs(99)), tapedeck.loopCpuMsPerKiloToken() / ceiling.loopCpuMsPerKiloToken(),
                tapedeck.loopWaitMsPerSecond(), ceiling.loopWaitMsPerSecond()));
        }
        if (rounds > 1)
        {
            printMedians(rows, rounds);
        }
    }

    /** Per contention and concurrency, the median over the rounds of each ratio to the ceiling. */
    private static void printMedians(final List<Row> rows, final int rounds)
    {
        final java.util.Map<String, List<double[]>> byRun = new java.util.LinkedHashMap<>();
        for (int i = 0; i + 1 < rows.size(); i += 2)
        {
            final Row tapedeck = rows.get(i);
            final Row ceiling = rows.get(i + 1);
            final String run = tapedeck.contention().replaceFirst(", round \\d+$", "") + ", " +
                String.format(Locale.ROOT, "%,d", tapedeck.streams()) + " streams";
            byRun.computeIfAbsent(run, k -> new ArrayList<>()).add(new double[] {
                tapedeck.client().tokensPerSecond() / ceiling.client().tokensPerSecond(),
                ratio(tapedeck.latenessUs(99), ceiling.latenessUs(99)),
                tapedeck.loopCpuMsPerKiloToken() / ceiling.loopCpuMsPerKiloToken()});
        }
        System.out.println();
        System.out.println("Medians over " + rounds + " rounds (tapedeck/ceiling):");
        byRun.forEach((run, ratios) -> System.out.println(String.format(Locale.ROOT,
            "%s: tokens/s %.2fx, lateness p99 %.2fx, loop CPU per token %.2fx", run, median(ratios, 0),
            median(ratios, 1), median(ratios, 2))));
    }

    private static double median(final List<double[]> values, final int index)
    {
        return median(values.stream().mapToDouble(v -> v[index]).toArray());
    }

    /**
     * @return the median of {@code values} (the mean of the middle two for an even count); the array is not changed.
     */
    static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        final int middle = sorted.length / 2;
        return 0 == sorted.length % 2 ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle];
    }

    /**
     * A process's event-loop threads' time on a CPU and time waiting, runnable, for one, in nanoseconds (-1 each
     * where the kernel's per-thread figures cannot be read).
     */
    record LoopTimes(long ranNs, long waitedNs)
    {
        static final LoopTimes UNKNOWN = new LoopTimes(-1, -1);

        LoopTimes since(final LoopTimes start)
        {
            return ranNs < 0 || start.ranNs < 0 ? UNKNOWN : new LoopTimes(ranNs - start.ranNs,
                waitedNs - start.waitedNs);
        }
    }

    /**
     * Times so far of a process's event-loop threads (tapedeck's {@code tapedeck-http-*}, the bare server's
     * {@code multiThreadIoEventLoopGroup-*}), from the kernel's per-thread {@code schedstat}: time on a CPU, time
     * waiting for one.
     *
     * @return the sums, or {@link LoopTimes#UNKNOWN} where {@code /proc} has no such figures (not Linux).
     */
    static LoopTimes loopTimes(final long pid)
    {
        final long[] ranAndWaitedNs = new long[2];
        final boolean read = ThreadGroupCpu.eachThread(Long.toString(pid), (name, ranNs, waitedNs) ->
        {
            if (name.startsWith("tapedeck-http") || name.startsWith("multiThreadIo"))
            {
                ranAndWaitedNs[0] += ranNs;
                ranAndWaitedNs[1] += waitedNs;
            }
        });
        return read ? new LoopTimes(ranAndWaitedNs[0], ranAndWaitedNs[1]) : LoopTimes.UNKNOWN;
    }

    private static double ratio(final long value, final long base)
    {
        return (double)Math.max(value, 1) / Math.max(base, 1);
    }

    /**
     * KV blocks for every stream at its longest (a short prompt and all its tokens, 16-token blocks), so that tapedeck
     * runs all the streams at once as the bare server does: with the default cache (33,600 blocks, the 8B model on one
     * GPU) 10,000 streams of 200 tokens do not fit and the scheduler would hold about half of them back, which is a
     * capacity limit, not the server's speed.
     */
    static int kvBlocksFor(final int streams, final int maxTokens)
    {
        final int blocksPerStream = (PROMPT_TOKENS_BOUND + maxTokens + 15) / 16;
        return Math.max(33_600, streams * blocksPerStream + streams / 10);
    }

    /** What every server of one row pair is asked. */
    private record Run(String contention, int streams, long warmupS, long measureS, int maxTokens, int itlMs,
        int competitorThreads, String competitorCpus)
    {
    }

    private static Row measure(final String name, final List<String> command, final int port, final Run run)
        throws Exception
    {
        System.out.println("== " + name + ", " + run.streams() + " streams, " + run.contention() + ": " +
            String.join(" ", command));
        final Path log = Files.createTempFile("tapedeck-scale-", ".log");
        final Process competitor = CpuCompetitor.start(run.competitorThreads(), run.competitorCpus());
        Process server = null;
        try
        {
            server = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            waitForHealth(port, server, log);
            final SseLoadClient client = new SseLoadClient("127.0.0.1", port, run.maxTokens(),
                TimeUnit.MILLISECONDS.toNanos(run.itlMs()));
            final long pid = server.pid();
            // the loop's CPU over the client's window, sampled beside it (the window opens after the warm-up)
            final java.util.concurrent.CompletableFuture<LoopTimes> loop =
                java.util.concurrent.CompletableFuture.supplyAsync(() ->
                {
                    try
                    {
                        Thread.sleep(TimeUnit.SECONDS.toMillis(run.warmupS()));
                        final LoopTimes start = loopTimes(pid);
                        Thread.sleep(TimeUnit.SECONDS.toMillis(run.measureS()));
                        return loopTimes(pid).since(start);
                    }
                    catch (final InterruptedException ex)
                    {
                        Thread.currentThread().interrupt();
                        return LoopTimes.UNKNOWN;
                    }
                });
            final SseLoadClient.Result result = client.run(run.streams(), TimeUnit.SECONDS.toNanos(run.warmupS()),
                TimeUnit.SECONDS.toNanos(run.measureS()), TimeUnit.SECONDS.toNanos(30));
            final JsonNode lateness = stats(port).get("emission_lateness_us");
            System.out.println(String.format(Locale.ROOT, "   completed %,d, errors %d, open %d, tokens/s %,.0f " +
                "(client), events/s %,.0f, server lateness over the run %s%s", result.completed(), result.errors(),
                result.openAtEnd(), result.tokensPerSecond(), result.eventsPerSecond(), lateness,
                result.errorKinds().isEmpty() ? "" : ", errors " + result.errorKinds()));
            return new Row(run.contention(), name, run.streams(), result, lateness.get("p99").asLong(),
                loop.get(), run.measureS());
        }
        finally
        {
            if (null != server)
            {
                server.destroy();
                if (!server.waitFor(30, TimeUnit.SECONDS))
                {
                    server.destroyForcibly();
                }
            }
            CpuCompetitor.stop(competitor);
        }
    }

    private static JsonNode stats(final int port)
    {
        try
        {
            final HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + port + "/tapedeck/stats")).build(), HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(response.body());
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    private static void waitForHealth(final int port, final Process server, final Path log) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline)
        {
            if (!server.isAlive())
            {
                throw new IllegalStateException("server exited: " + Files.readString(log));
            }
            try
            {
                if (200 == HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                    .build(), HttpResponse.BodyHandlers.discarding()).statusCode())
                {
                    return;
                }
            }
            catch (final IOException ignored)
            {
                // not up yet
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("server not healthy after 60 s: " + Files.readString(log));
    }

    private static String machine() throws IOException
    {
        String cpu = "unknown CPU";
        final File cpuinfo = new File("/proc/cpuinfo");
        if (cpuinfo.exists())
        {
            for (final String line : Files.readAllLines(cpuinfo.toPath()))
            {
                if (line.startsWith("model name"))
                {
                    cpu = line.substring(line.indexOf(':') + 1).trim();
                    break;
                }
            }
        }
        return Runtime.getRuntime().availableProcessors() + " cores (" + cpu + "), Java " +
            System.getProperty("java.version");
    }

    /**
     * @return the value following {@code name} in {@code args}, or {@code fallback} when it is not given.
     */
    static String arg(final String[] args, final String name, final String fallback)
    {
        for (int i = 0; i + 1 < args.length; i++)
        {
            if (name.equals(args[i]))
            {
                return args[i + 1];
            }
        }
        return fallback;
    }
}
