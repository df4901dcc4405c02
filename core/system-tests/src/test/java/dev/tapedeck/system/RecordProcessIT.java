package dev.tapedeck.system;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.Value;

import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;
import dev.tapedeck.record.RecordingFrontend;
import dev.tapedeck.record.Wire;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.protocol.enginecore.RequestType;
import dev.tapedeck.trace.TraceReader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tapedeck record} as users run it, from the shaded jar in its own process, between a frontend (raw JeroMQ)
 * and {@code play}: a SIGTERM while a request is in flight ends it with exit code 0 and a complete gzip trace holding
 * every request that finished.
 */
@Timeout(120)
class RecordProcessIT
{
    private static final LatencyModel FAST =
        new StepLatencyModel(new StepCoefficients("test", 1000, 0.5, 5, 0, 0, "test"));
    private static final Pattern ENDPOINT = Pattern.compile("engine handshake (tcp://[0-9.]+:\\d+),");

    @TempDir
    Path dir;

    private Process process;
    private Play server;
    private RecordingFrontend frontend;

    @AfterEach
    void stop()
    {
        if (null != process)
        {
            process.destroyForcibly();
        }
        if (null != server)
        {
            server.shutdown(0);
        }
        if (null != frontend)
        {
            frontend.close();
        }
    }

    @Test
    void shouldLeaveACompleteGzipTraceAndExitZeroOnSigterm() throws Exception
    {
        final String jar = System.getProperty("tapedeck.test.jar");
        assertTrue(null != jar && Files.isRegularFile(Path.of(jar)), "the shaded jar is built before ITs: " + jar);
        frontend = new RecordingFrontend();
        final Path trace = dir.resolve("capture.jsonl.gz");
        process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-jar", jar, "record",
            "--frontend-handshake", frontend.handshakeAddress, "--engine-handshake", "tcp://127.0.0.1:0",
            "--input-address", "tcp://127.0.0.1:0", "--output-address", "tcp://127.0.0.1:0",
            "--trace-out", trace.toString(), "--model", "Qwen/Qwen3-8B", "--handshake-timeout", "30s")
            .redirectErrorStream(true).start();
        final BufferedReader output = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8));
        final List<String> log = new ArrayList<>();
        final String engineHandshake = awaitEndpoint(output, log);
        final Thread pump = new Thread(() -> output.lines().forEach(line ->
        {
            synchronized (log)
            {
                log.add(line);
            }
        }));
        pump.setDaemon(true);
        pump.start();

        server = Play.start(new PlayContext().handshakeAddress(engineHandshake).handshakeTimeoutNs(30_000_000_000L)
            .shutdownTimeoutNs(0).engine(new EngineConfig().maxModelLen(8192).latencyModel(FAST)));
        frontend.awaitEngine();
        final Set<String> finished = new HashSet<>();
        for (int i = 0; i < 3; i++)
        {
            frontend.send(RequestType.ADD, Wire.add("r" + i, new int[] {5, 6, 7, 8, 9}, 6 + i));
        }
        while (finished.size() < 3)
        {
            final List<byte[]> message = frontend.receive();
            assertNotNull(message, "outputs through the tap");
            for (final Value v : Wire.unpack(message.get(0)).asArrayValue().get(1).asArrayValue())
            {
                final ArrayValue o = v.asArrayValue();
                if (o.size() > 5 && !o.get(5).isNilValue())
                {
                    finished.add(o.get(0).asStringValue().asString());
                }
            }
        }
        frontend.send(RequestType.ADD, Wire.add("long", new int[] {5, 6, 7}, 5000));
        awaitOutput(frontend, "long");
        awaitRecords(trace, 3);

        process.toHandle().destroy(); // SIGTERM
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the tap exits");
        pump.join(10_000);
        synchronized (log)
        {
            assertEquals(0, process.exitValue(), "a signal is the normal end of a capture: " + log);
            assertTrue(log.stream().anyMatch(l -> l.contains("recorded 3 request(s)")), log.toString());
        }
        try (GZIPInputStream in = new GZIPInputStream(Files.newInputStream(trace)))
        {
            in.readAllBytes(); // an EOFException here would mean a missing gzip trailer
        }
        final TraceReader.Trace captured = TraceReader.readAll(trace);
        assertTrue(captured.warnings().isEmpty(), "complete file: " + captured.warnings());
        assertEquals(3, captured.records().size(), "the three finished requests; the one in flight is left out");
        assertEquals("tap", captured.meta().source());
        assertEquals("Qwen/Qwen3-8B", captured.meta().model());
    }

    private static String awaitEndpoint(final BufferedReader output, final List<String> log) throws IOException
    {
        String line;
        while (null != (line = output.readLine()))
        {
            log.add(line);
            final Matcher m = ENDPOINT.matcher(line);
            if (m.find())
            {
                return m.group(1);
            }
        }
        throw new AssertionError("record exited before listening: " + log);
    }

    private static void awaitOutput(final RecordingFrontend frontend, final String id)
    {
        while (true)
        {
            final List<byte[]> message = frontend.receive();
            assertNotNull(message, "outputs of " + id);
            for (final Value v : Wire.unpack(message.get(0)).asArrayValue().get(1).asArrayValue())
            {
                if (id.equals(v.asArrayValue().get(0).asStringValue().asString()))
                {
                    return;
                }
            }
        }
    }

    /** Wait until the live (flushed, not yet closed) trace holds {@code count} records. */
    private static void awaitRecords(final Path trace, final int count) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (TraceReader.readAll(trace).records().size() < count)
        {
            assertTrue(System.nanoTime() < deadline, "records flushed while the capture runs");
            Thread.sleep(20);
        }
    }
}
