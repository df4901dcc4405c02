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
 * then {@link BareSseServer} (the ceiling) driven the same way on the same schedule. Prints errors, token throughput,
 * and p50/p99 token-emission lateness (write time minus the model's due time) for both, as a markdown table.
 * <p>
 * Usage: {@code java -cp bench/target/benchmarks.jar dev.tapedeck.bench.ScaleBench [--streams 1000,10000]
 * [--warmup 10] [--measure 20] [--ttft-ms 100] [--itl-ms 50] [--max-tokens 200] [--transport auto]
 * [--jar core/cli/target/tapedeck.jar]}
 */
public final class ScaleBench
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private ScaleBench()
    {
    }

    /** One measured run. */
    record Row(String server, int streams, double tokensPerSecond, double clientEventsPerSecond, long errors,
        long completed, long p50Us, long p99Us, long maxUs)
    {
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
        final String benchJar = ScaleBench.class.getProtectionDomain().getCodeSource().getLocation().getPath();
        final List<Row> rows = new ArrayList<>();
        int port = 18_400;
        for (final int streams : concurrency)
        {
            final List<String> tapedeck = List.of("java", "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
                "-jar", jar, "serve", "--port", Integer.toString(port), "--latency-model", "knob",
                "--time-to-first-token", ttftMs + "ms", "--inter-token-latency", itlMs + "ms",
                "--max-num-seqs", Integer.toString(streams), "--max-num-batched-tokens",
                Integer.toString(Math.max(8192, 2 * streams)), "--max-waiting-queue-length",
                Integer.toString(2 * streams), "--max-model-len", "4096", "--transport", transport);
            rows.add(measure("tapedeck serve", tapedeck, port++, streams, warmupS, measureS, maxTokens));
            final List<String> bare = List.of("java", "-cp", benchJar, BareSseServer.class.getName(),
                Integer.toString(port), Integer.toString(ttftMs), Integer.toString(itlMs),
                Integer.toString(maxTokens), transport);
            rows.add(measure("bare Netty (ceiling)", bare, port++, streams, warmupS, measureS, maxTokens));
        }
        System.out.println();
        System.out.println("Scale run " + LocalDate.now() + " on " + machine() + "; TTFT " + ttftMs + " ms, ITL " +
            itlMs + " ms, " + maxTokens + " tokens per request, transport " + transport + ", warm-up " + warmupS +
            " s, window " + measureS + " s");
        System.out.println();
        System.out.println("| server | streams | errors | completed | tokens/s (server) | events/s (client) | " +
            "lateness p50 | lateness p99 | lateness max |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (final Row row : rows)
        {
            System.out.println(String.format(Locale.ROOT,
                "| %s | %,d | %d | %,d | %,.0f | %,.0f | %.2f ms | %.2f ms | %.2f ms |", row.server(), row.streams(),
                row.errors(), row.completed(), row.tokensPerSecond(), row.clientEventsPerSecond(),
                row.p50Us() / 1000.0, row.p99Us() / 1000.0, row.maxUs() / 1000.0));
        }
        for (int i = 0; i + 1 < rows.size(); i += 2)
        {
            System.out.println(String.format(Locale.ROOT, "%,d streams: tapedeck delivers %.2fx the ceiling's " +
                "token rate", rows.get(i).streams(), rows.get(i).tokensPerSecond() /
                rows.get(i + 1).tokensPerSecond()));
        }
    }

    private static Row measure(final String name, final List<String> command, final int port, final int streams,
        final long warmupS, final long measureS, final int maxTokens) throws Exception
    {
        System.out.println("== " + name + ", " + streams + " streams: " + String.join(" ", command));
        final Path log = Files.createTempFile("tapedeck-scale-", ".log");
        final Process server = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(log.toFile()).start();
        try
        {
            waitForHealth(port, server, log);
            final long[] window = new long[3];
            final JsonNode[] stats = new JsonNode[2];
            final SseLoadClient client = new SseLoadClient("127.0.0.1", port, maxTokens);
            final SseLoadClient.Result result = client.run(streams, TimeUnit.SECONDS.toNanos(warmupS),
                TimeUnit.SECONDS.toNanos(measureS), TimeUnit.SECONDS.toNanos(30), new SseLoadClient.Window()
                {
                    @Override
                    public void onStart()
                    {
                        stats[0] = stats(port, true);
                        window[0] = System.nanoTime();
                    }

                    @Override
                    public void onEnd(final long eventsInWindow)
                    {
                        window[1] = System.nanoTime();
                        stats[1] = stats(port, false);
                        window[2] = eventsInWindow;
                    }
                });
            final double seconds = (window[1] - window[0]) / 1e9;
            final double tokensPerSecond = (stats[1].get("tokens").asLong() - stats[0].get("tokens").asLong()) /
                seconds;
            final JsonNode lateness = stats[1].get("emission_lateness_us");
            System.out.println("   " + result + ", tokens/s " + (long)tokensPerSecond + ", lateness " + lateness);
            return new Row(name, streams, tokensPerSecond, window[2] / seconds, result.errors(), result.completed(),
                lateness.get("p50").asLong(), lateness.get("p99").asLong(), lateness.get("max").asLong());
        }
        finally
        {
            server.destroy();
            if (!server.waitFor(30, TimeUnit.SECONDS))
            {
                server.destroyForcibly();
            }
        }
    }

    private static JsonNode stats(final int port, final boolean reset)
    {
        try
        {
            final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + port + "/tapedeck/stats" + (reset ? "/reset" : "")));
            final HttpResponse<String> response = HTTP.send(reset ? request.POST(HttpRequest.BodyPublishers.noBody())
                .build() : request.build(), HttpResponse.BodyHandlers.ofString());
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

    private static String arg(final String[] args, final String name, final String fallback)
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
