package dev.tapedeck.record;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.zip.GZIPInputStream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.msgpack.value.MapValue;

import dev.tapedeck.protocol.enginecore.RequestType;
import dev.tapedeck.trace.ConfigFingerprint;
import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tap between a scripted engine and a frontend that both keep every byte (raw JeroMQ on loopback): the handshake
 * payloads arrive verbatim, every frame of every message arrives byte for byte both ways (aux frames, an empty frame,
 * multi-megabyte frames), and the trace, its meta line and the step-stats sidecar say what went through.
 */
@Timeout(120)
class TapRelayIT
{
    private static final String ENGINE_CONFIG = "block_size=16;enable_prefix_caching=true;max_num_seqs=256;" +
        "model=Qwen/Qwen3-8B";
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Random random = new Random(42);

    @TempDir
    Path dir;

    private RecordingFrontend frontend;
    private ScriptedEngine engine;
    private RecordingTap tap;

    @AfterEach
    void stop() throws InterruptedException
    {
        if (null != tap)
        {
            tap.stop();
            assertTrue(tap.awaitEnd(20_000), "the tap stops");
        }
        if (null != engine)
        {
            engine.close();
        }
        if (null != frontend)
        {
            frontend.close();
        }
    }

    private Path trace()
    {
        return dir.resolve("trace.jsonl.gz");
    }

    private RecordingTap start(final String vllmVersion, final String configHash, final Path stepStats,
        final boolean recordTokens) throws IOException
    {
        frontend = new RecordingFrontend();
        tap = RecordingTap.start(new RecordContext().frontendHandshake(frontend.handshakeAddress).traceOut(trace())
            .stepStatsOut(stepStats).model("Qwen/Qwen3-8B").gpu("H200").tp(1L).configHash(configHash)
            .vllmVersion(vllmVersion).maxNumSeqs(256L).engineConfig(ENGINE_CONFIG).recordTokens(recordTokens)
            .handshakeTimeoutNs(30_000_000_000L));
        engine = new ScriptedEngine();
        return tap;
    }

    private void connectBothSides(final byte[] registration) throws InterruptedException
    {
        engine.handshake(tap.engineHandshakeEndpoint(), ScriptedEngine.hello(false, true), registration,
            ScriptedEngine.ready());
        frontend.awaitEngine();
        assertTrue(tap.awaitRelaying(20_000), "relaying: " + tap.failure());
    }

    private byte[] randomBytes(final int length)
    {
        final byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    private static void assertSameFrames(final List<byte[]> sent, final List<byte[]> received, final String what)
    {
        assertNotNull(received, what + " arrived");
        assertEquals(sent.size(), received.size(), what + ": frame count");
        for (int i = 0; i < sent.size(); i++)
        {
            assertArrayEquals(sent.get(i), received.get(i), what + ": frame " + i + " byte for byte");
        }
    }

    @Test
    void shouldRelayEveryFrameByteForByteInBothDirections() throws Exception
    {
        start(null, null, null, false);
        final byte[] registration = ScriptedEngine.registration("0.23.1");
        connectBothSides(registration);
        assertArrayEquals(registration, frontend.registration, "the registration payload reaches the frontend");
        assertArrayEquals(ScriptedEngine.ready(), frontend.ready, "READY reaches the frontend verbatim");
        assertArrayEquals(new byte[] {0, 0}, frontend.engineIdentity, "the tap is engine 0");
        final MapValue hello = frontend.helloBody();
        assertFalse(ScriptedEngine.get(hello, "local").asBooleanValue().getBoolean());
        assertTrue(ScriptedEngine.get(hello, "headless").asBooleanValue().getBoolean());
        final MapValue addresses = ScriptedEngine.get(engine.init, "addresses").asMapValue();
        assertEquals(tap.inputEndpoint(), ScriptedEngine.get(addresses, "inputs").asArrayValue().get(0)
            .asStringValue().asString(), "INIT names the tap's input");
        assertEquals(tap.outputEndpoint(), ScriptedEngine.get(addresses, "outputs").asArrayValue().get(0)
            .asStringValue().asString(), "INIT names the tap's output");
        assertTrue(ScriptedEngine.get(addresses, "coordinator_input").isNilValue());

        final byte[] multimodal = HexFormat.of().parseHex(Files.readString(
            TraceTestData.path("vllm-vcr-fixtures/mm_request_large_aux.hex")).trim());
        final List<List<byte[]>> toEngine = List.of(
            List.of(new byte[] {RequestType.ADD}, multimodal, randomBytes(2_408_448), new byte[0],
                randomBytes(11 * 1024 * 1024)),
            List.of(new byte[] {RequestType.UTILITY}, Wire.utility(0x8000000000000005L, "get_supported_tasks")),
            List.of(new byte[] {RequestType.ADD}, Wire.add("plain", new int[] {1, 2, 3}, 4)),
            List.of(new byte[] {RequestType.ABORT}, Wire.abort("plain")),
            List.of(randomBytes(3)));
        for (final List<byte[]> message : toEngine)
        {
            frontend.send(message);
        }
        for (int i = 0; i < toEngine.size(); i++)
        {
            assertSameFrames(toEngine.get(i), engine.receive(), "frontend message " + i);
        }

        final List<List<byte[]>> toFrontend = List.of(
            List.of(Wire.outputs(List.of(Wire.output("req-mm-large", new int[] {11, 12}, null)), null, null),
                randomBytes(3 * 1024 * 1024)),
            List.of(Wire.pack(Wire.array(0, Wire.array(), null, 1.0, Wire.array(
                org.msgpack.value.ValueFactory.newInteger(new java.math.BigInteger("9223372036854775813")), null,
                Wire.array(null, Wire.array("generate")))))),
            List.of(randomBytes(11 * 1024 * 1024)),
            List.of(Wire.outputs(List.of(Wire.output("req-mm-large", new int[] {13}, 1)), null, null)));
        for (final List<byte[]> message : toFrontend)
        {
            engine.send(message);
        }
        for (int i = 0; i < toFrontend.size(); i++)
        {
            assertSameFrames(toFrontend.get(i), frontend.receive(), "engine message " + i);
        }
        assertEquals(toEngine.size(), tap.messagesToEngine());
        assertEquals(toFrontend.size(), tap.messagesToFrontend());
        assertEquals(0, tap.sendFailures());

        tap.stop();
        assertTrue(tap.awaitEnd(20_000));
        final TraceReader.Trace trace = TraceReader.readAll(trace());
        assertTrue(trace.warnings().isEmpty(), "a complete gzip file: " + trace.warnings());
        assertEquals(1, trace.records().size(), "the multimodal request; the aborted one is left out");
        final TraceRecord record = trace.records().get(0);
        assertEquals(259, record.promptTokens());
        assertEquals(3, record.outputTokens());
        assertArrayEquals(new String[] {"processor-hash"}, record.mmHashes());
        assertEquals("length", record.finishReason());
        assertNull(record.outputTokenIds(), "tokens are recorded only with --record-tokens");
    }

    @Test
    void shouldStampTheMetaLineAndWriteStepStatsAndTokenIds() throws Exception
    {
        final Path stepStats = dir.resolve("steps.jsonl");
        start("v0.23.0", null, stepStats, true);
        final byte[] registration = ScriptedEngine.registration("0.23.1.dev4+g0123abc");
        connectBothSides(registration);
        frontend.send(RequestType.ADD, Wire.add("r1", new int[] {5, 6, 7, 8}, 3));
        assertNotNull(engine.receive());
        engine.send(Wire.outputs(List.of(Wire.output("r1", new int[] {40, 41}, null, 11, Wire.prefillStats(4, 0, 0))),
            Wire.stats(1, 0), null));
        engine.send(Wire.outputs(List.of(Wire.output("r1", new int[] {42}, 0)), Wire.stats(0, 0), null));
        engine.send(Wire.outputs(List.of(), Wire.stats(0, 0), null));
        for (int i = 0; i < 3; i++)
        {
            assertNotNull(frontend.receive());
        }
        tap.stop();
        assertTrue(tap.awaitEnd(20_000));

        final TraceReader.Trace trace = TraceReader.readAll(trace());
        final TraceMeta meta = trace.meta();
        assertEquals("tap", meta.source());
        assertEquals("Qwen/Qwen3-8B", meta.model());
        assertEquals("H200", meta.gpu());
        assertEquals(1L, meta.tp());
        assertEquals(256L, meta.maxNumSeqs());
        assertEquals(16L, meta.blockSize());
        assertEquals("0.23.1.dev4+g0123abc", meta.vllmVersion(), "the engine-reported version");
        assertEquals(HexFormat.of().formatHex(registration), meta.readyResponseHex());
        assertEquals(ConfigFingerprint.hash("H200", "v0.23.0", ENGINE_CONFIG), meta.configHash(),
            "fingerprint over gpu, the --vllm-version tag and the engine config");
        final TraceRecord record = trace.records().get(0);
        assertArrayEquals(new int[] {40, 41, 42}, record.outputTokenIds());
        assertEquals("stop", record.finishReason());
        assertNull(record.itlTokens(), "the one gap closes on one token: itl_tokens is left out");
        assertEquals(1, record.itlMs().length, "two chunks, one gap");
        assertEquals(3, record.outputTokens());

        final List<String> lines = Files.readAllLines(stepStats);
        assertEquals(3, lines.size(), "one line per output message with stats");
        double previous = -1;
        for (final String line : lines)
        {
            final JsonNode step = JSON.readTree(line);
            assertTrue(step.get("ts_ms").doubleValue() >= previous, "times never go back");
            previous = step.get("ts_ms").doubleValue();
            assertEquals(7, step.at("/scheduler/step_counter").intValue());
        }
        assertEquals(1, JSON.readTree(lines.get(0)).at("/scheduler/num_running_reqs").intValue());
        assertTrue(record.arrivalMs() <= JSON.readTree(lines.get(0)).get("ts_ms").doubleValue(),
            "the sidecar and the trace share their zero");
    }

    @Test
    void shouldRefuseAnEngineOfAnotherVersionBeforeTheFrontendSeesAnything() throws Exception
    {
        start("v0.23.0", null, null, false);
        engine.handshake(tap.engineHandshakeEndpoint(), ScriptedEngine.hello(false, true),
            ScriptedEngine.registration("0.24.1"), ScriptedEngine.ready());
        assertTrue(tap.awaitEnd(20_000), "the tap gives up");
        assertInstanceOf(IllegalArgumentException.class, tap.failure());
        assertTrue(tap.failure().getMessage().contains("--vllm-version v0.23.0 (0.23) does not match the engine, " +
            "which reports vLLM 0.24.1 (0.24)"), tap.failure().getMessage());
        frontend.handshake.setReceiveTimeOut(300);
        assertNull(frontend.handshake.recv(0), "the tap never said HELLO to the frontend");
        assertFalse(Files.exists(trace()), "no trace for a refused capture");
        tap = null;
    }

    @Test
    void shouldRecordAnEngineThatReportsNoVersionWithAnExplicitConfigHash() throws Exception
    {
        start("v0.18.0", "cafe", null, false);
        // vLLM 0.18 and older: an empty registration payload, READY with num_gpu_blocks
        connectBothSides(new byte[0]);
        assertEquals(0, frontend.registration.length, "the empty payload is relayed as it is");
        tap.stop();
        assertTrue(tap.awaitEnd(20_000));
        final TraceMeta meta = TraceReader.readAll(trace()).meta();
        assertEquals("cafe", meta.configHash());
        assertNull(meta.vllmVersion());
        assertEquals("", meta.readyResponseHex());
        try (GZIPInputStream in = new GZIPInputStream(Files.newInputStream(trace())))
        {
            final String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(1, new ArrayList<>(text.lines().toList()).size(), "the meta line only: " + text);
        }
    }
}
