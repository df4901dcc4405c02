package dev.tapedeck.cli.inspect;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import picocli.CommandLine;

import dev.tapedeck.cli.EngineOptions;
import dev.tapedeck.load.Calibration;
import dev.tapedeck.protocol.enginecore.AddRequest;
import dev.tapedeck.protocol.enginecore.AddRequestDecoder;
import dev.tapedeck.protocol.enginecore.Handshake;
import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.MsgPackWriter;
import dev.tapedeck.protocol.msgpack.ValueType;
import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

/**
 * Runs the conformance assertions on every golden of a manifest (vllm-vcr's runbook, docs/conformance.md):
 * <ol>
 *   <li><b>integrity</b>: the file's SHA-256 is the manifest's;</li>
 *   <li><b>line</b>: the golden's line is one tapedeck supports ({@code compat.toml}) and the vLLM version the capture
 *       records is of that line;</li>
 *   <li><b>provenance</b>: the capture's {@code config_hash} is the manifest's;</li>
 *   <li><b>schema</b>: tapedeck reads everything in it: an ADD payload decodes whole, media positions included; a
 *       trace's recorded engine registration has no key tapedeck's registration lacks;</li>
 *   <li><b>fidelity</b> (role {@code fidelity}): the capture's workload replayed through the engine in virtual time
 *       with the capture's own timing ({@code --latency-trace}) is within the calibration gates at the golden's
 *       tolerance.</li>
 * </ol>
 * An assertion that does not apply (an unstamped capture, a payload without a version) is skipped with its reason; a
 * golden whose local file is absent is skipped whole. Runs on the calling thread.
 */
final class ConformanceRun
{
    /** How an assertion ended. */
    enum Status
    {
        PASS,
        FAIL,
        SKIP
    }

    /**
     * @param name the assertion.
     * @param status how it ended.
     * @param detail what was compared, or why it was skipped.
     */
    record Check(String name, Status status, String detail)
    {
    }

    /**
     * @param golden the golden.
     * @param checks its assertions, in order.
     */
    record Result(ConformanceFiles.Golden golden, List<Check> checks)
    {
        boolean failed()
        {
            return checks.stream().anyMatch(c -> Status.FAIL == c.status());
        }
    }

    private final List<ConformanceFiles.Line> lines;
    private final Path manifestDir;

    /**
     * @param lines the supported lines ({@code compat.toml}).
     * @param manifestDir where relative golden paths start.
     */
    ConformanceRun(final List<ConformanceFiles.Line> lines, final Path manifestDir)
    {
        this.lines = lines;
        this.manifestDir = manifestDir;
    }

    /**
     * @param golden one golden.
     * @return its assertions.
     */
    Result check(final ConformanceFiles.Golden golden)
    {
        final List<Check> checks = new ArrayList<>();
        final byte[] bytes;
        final Path local;
        try
        {
            if (golden.path().startsWith("http://") || golden.path().startsWith("https://"))
            {
                bytes = fetch(golden.path());
                local = Files.createTempFile("tapedeck-golden-", golden.path().endsWith(".gz") ? ".jsonl.gz" :
                    golden.path().endsWith(".hex") ? ".hex" : ".jsonl");
                local.toFile().deleteOnExit();
                Files.write(local, bytes);
            }
            else
            {
                local = manifestDir.resolve(golden.path()).normalize();
                if (!Files.isRegularFile(local))
                {
                    checks.add(new Check("fetch", Status.SKIP, local + " is not here"));
                    return new Result(golden, checks);
                }
                bytes = Files.readAllBytes(local);
            }
        }
        catch (final IOException | InterruptedException | IllegalArgumentException ex)
        {
            checks.add(new Check("fetch", Status.FAIL, golden.path() + ": " + ex.getMessage()));
            return new Result(golden, checks);
        }
        final String sha256 = sha256(bytes);
        checks.add(sha256.equals(golden.sha256()) ? new Check("integrity", Status.PASS, sha256) :
            new Check("integrity", Status.FAIL, "sha256 " + sha256 + ", the manifest says " + golden.sha256()));
        if (golden.path().endsWith(".hex"))
        {
            checkAddPayload(golden, new String(bytes, StandardCharsets.US_ASCII), checks);
        }
        else
        {
            checkTrace(golden, local, checks);
        }
        return new Result(golden, checks);
    }

    private void checkAddPayload(final ConformanceFiles.Golden golden, final String hex, final List<Check> checks)
    {
        checks.add(lineCheck(golden, null));
        checks.add(new Check("provenance", Status.SKIP, "a request payload carries no configuration fingerprint"));
        final byte[] payload;
        try
        {
            payload = HexFormat.of().parseHex(hex.replaceAll("\\s", ""));
        }
        catch (final IllegalArgumentException ex)
        {
            checks.add(new Check("schema", Status.FAIL, "not hex: " + ex.getMessage()));
            return;
        }
        final AddRequestDecoder decoder = new AddRequestDecoder();
        final AddRequest request = new AddRequest();
        if (!decoder.decode(new UnsafeBuffer(payload), 0, payload.length, request))
        {
            checks.add(new Check("schema", Status.FAIL, "the ADD decoder refused it: " + decoder.error()));
        }
        else if (request.hasMultimodal && 0 == request.mediaCount())
        {
            checks.add(new Check("schema", Status.FAIL, "its mm_features were not read (no identifier and position)"));
        }
        else
        {
            checks.add(new Check("schema", Status.PASS, "ADD " + request.requestId() + ": " + request.promptLength() +
                " prompt tokens, max_tokens " + request.maxTokens + ", " + request.mediaCount() + " media item(s)"));
        }
        checks.add(new Check("fidelity", Status.SKIP, "a request payload has no answer to replay"));
    }

    private void checkTrace(final ConformanceFiles.Golden golden, final Path file, final List<Check> checks)
    {
        final TraceReader.Trace trace;
        try
        {
            trace = TraceReader.readAll(file);
        }
        catch (final IOException | IllegalArgumentException ex)
        {
            checks.add(new Check("schema", Status.FAIL, "not a readable trace: " + ex.getMessage()));
            return;
        }
        final TraceMeta meta = trace.meta();
        checks.add(lineCheck(golden, meta.vllmVersion()));
        if (golden.configHash().isEmpty())
        {
            checks.add(new Check("provenance", Status.SKIP, "the manifest names no config_hash"));
        }
        else
        {
            checks.add(golden.configHash().equalsIgnoreCase(String.valueOf(meta.configHash())) ? new Check(
                "provenance", Status.PASS,
                golden.configHash()) : new Check("provenance", Status.FAIL, "the capture's config_hash is " +
                meta.configHash() + ", the manifest says " + golden.configHash()));
        }
        checks.add(registrationCheck(meta.readyResponseHex()));
        checks.add("fidelity".equals(golden.role()) ? fidelity(golden, file, trace) :
            new Check("fidelity", Status.SKIP, "role schema"));
    }

    /** The golden's line is supported, and the capture's version (when it has one) is of that line. */
    private Check lineCheck(final ConformanceFiles.Golden golden, final String capturedVersion)
    {
        if (lines.stream().noneMatch(l -> l.line().equals(golden.line())))
        {
            return new Check("line", Status.FAIL, "line " + golden.line() + " is not in compat.toml");
        }
        if (null == capturedVersion)
        {
            return new Check("line", Status.SKIP, "the capture records no vLLM version (line " + golden.line() +
                " per the manifest)");
        }
        final String captured = ConformanceFiles.minorLine(capturedVersion);
        final String expected = ConformanceFiles.minorLine(golden.line());
        if (null == expected)
        {
            return new Check("line", Status.PASS, "tracker " + golden.line() + " takes any version (" +
                capturedVersion + ")");
        }
        return expected.equals(captured) ? new Check("line", Status.PASS, capturedVersion) : new Check("line",
            Status.FAIL, "captured on " + capturedVersion + ", filed under line " + golden.line());
    }

    /** Every key of the recorded engine registration is one tapedeck's registration carries. */
    static Check registrationCheck(final String recordedHex)
    {
        if (null == recordedHex || recordedHex.isEmpty())
        {
            return new Check("schema", Status.SKIP, "the capture recorded no engine registration");
        }
        final Set<String> recorded;
        try
        {
            recorded = mapKeys(HexFormat.of().parseHex(recordedHex));
        }
        catch (final IllegalArgumentException ex)
        {
            return new Check("schema", Status.FAIL, "the recorded registration is not a msgpack map: " +
                ex.getMessage());
        }
        final MsgPackWriter writer = new MsgPackWriter().wrap(new ExpandableArrayBuffer(1024), 0);
        final int length = Handshake.registration(writer, new Handshake.Registration(4096, 1000, 16, 256, 8192, 0, 1,
            "0", "conformance", false, 0));
        final byte[] ours = new byte[length];
        writer.buffer().getBytes(0, ours);
        final Set<String> missing = new LinkedHashSet<>(recorded);
        missing.removeAll(mapKeys(ours));
        return missing.isEmpty() ? new Check("schema", Status.PASS, "tapedeck's registration carries all " +
            recorded.size() + " keys the engine sent") : new Check("schema", Status.FAIL,
            "tapedeck's registration lacks " + missing);
    }

    private static Set<String> mapKeys(final byte[] msgpack)
    {
        final MsgPackReader reader = new MsgPackReader().wrap(new UnsafeBuffer(msgpack), 0, msgpack.length);
        if (ValueType.MAP != reader.nextType())
        {
            throw new IllegalArgumentException("not a map");
        }
        final int pairs = reader.readMapHeader();
        final Set<String> keys = new LinkedHashSet<>();
        for (int i = 0; i < pairs && reader.ok(); i++)
        {
            if (ValueType.STRING == reader.nextType())
            {
                keys.add(reader.readString());
            }
            else
            {
                reader.skipValue();
            }
            reader.skipValue();
        }
        if (!reader.ok())
        {
            throw new IllegalArgumentException(reader.errorMessage());
        }
        return keys;
    }

    /** The workload replayed with the capture's own timing, within the calibration gates. */
    private static Check fidelity(final ConformanceFiles.Golden golden, final Path file,
        final TraceReader.Trace trace)
    {
        if (trace.records().stream().noneMatch(r -> null != r.arrivalMs()))
        {
            return new Check("fidelity", Status.SKIP, "no record has arrival_ms: nothing to replay");
        }
        final EngineOptions engine = new EngineOptions();
        final CommandLine cli = new CommandLine(engine).setCaseInsensitiveEnumValuesAllowed(true);
        final Calibration.Result result;
        try
        {
            cli.parseArgs("--latency-trace", file.toString());
            result = CalibrateCommand.replay(file, engine, cli.getParseResult(), null, golden.tolerance(), Map.of());
        }
        catch (final IOException | RuntimeException ex)
        {
            return new Check("fidelity", Status.FAIL, "replay failed: " + ex.getMessage());
        }
        final boolean tokens = trace.records().stream().map(TraceRecord::outputTokenIds).anyMatch(ids -> null != ids);
        final String tokenVerdict = tokens ? tokenStreams(file, trace) : null;
        double worst = 0;
        for (final Calibration.MetricResult metric : result.metrics())
        {
            worst = Math.max(worst, metric.maxError());
        }
        final String summary = String.format(java.util.Locale.ROOT, "%d requests replayed with the capture's timing, " +
            "%d metrics, largest p50/p90/p99 error %.1f%% (tolerance %.0f%%); %s", trace.records().stream()
            .filter(r -> null != r.arrivalMs()).count(),
            result.metrics().size(), 100 * worst, 100 * golden.tolerance(), tokens ? tokenVerdict :
            "no token ids recorded");
        final boolean tokensMatch = !tokens || tokenVerdict.startsWith("token streams identical");
        return result.pass() && tokensMatch ? new Check("fidelity", Status.PASS, summary) : new Check("fidelity",
            Status.FAIL, summary + (result.pass() ? "" : ": " + String.join("; ", result.failures())));
    }

    /**
     * Replay the workload with every request writing its record's recorded tokens ({@code --replay-tokens FILE
     * --replay-tokens-match index}, as {@code play} serves a frontend), and compare the streams token for token.
     *
     * @return "token streams identical ..." or what differs first.
     */
    private static String tokenStreams(final Path file, final TraceReader.Trace trace)
    {
        final EngineOptions engine = new EngineOptions();
        final CommandLine cli = new CommandLine(engine).setCaseInsensitiveEnumValuesAllowed(true);
        final dev.tapedeck.capture.TraceReplayRun.Result run;
        try
        {
            cli.parseArgs("--latency-trace", file.toString(), "--replay-tokens", file.toString(),
                "--replay-tokens-match", "index");
            final String model = null != trace.meta().model() ? trace.meta().model() :
                dev.tapedeck.serve.ServeContext.DEFAULT_MODEL;
            run = dev.tapedeck.capture.TraceReplayRun.replay(TraceReader.readAll(file).records(), engine
                .capacityModel(model).replayTemplate(cli.getParseResult(), trace.meta().maxNumSeqs(),
                trace.meta().blockSize()), true);
        }
        catch (final IOException | RuntimeException ex)
        {
            return "token replay failed: " + ex.getMessage();
        }
        return compareStreams(run.source(), run.replayed());
    }

    /**
     * @param sources the recorded requests, each with its {@code request_id}.
     * @param replays the replay's records, with the same ids.
     * @return "token streams identical ..." or what differs first.
     */
    static String compareStreams(final List<TraceRecord> sources, final List<TraceRecord> replays)
    {
        final Map<String, TraceRecord> replayed = new java.util.HashMap<>();
        replays.forEach(r -> replayed.put(r.extra().get("request_id").asText(), r));
        int compared = 0;
        for (final TraceRecord source : sources)
        {
            final int[] recorded = source.outputTokenIds();
            if (null == recorded)
            {
                continue;
            }
            final String id = source.extra().get("request_id").asText();
            final TraceRecord replay = replayed.get(id);
            final int[] produced = null == replay ? null : replay.outputTokenIds();
            if (null == produced)
            {
                return "token streams differ: " + id + " produced no tokens";
            }
            if (!java.util.Arrays.equals(recorded, produced))
            {
                final int at = java.util.Arrays.mismatch(recorded, produced);
                return "token streams differ: " + id + " at token " + at + " of " + recorded.length + " (" +
                    produced.length + " produced)";
            }
            if (null != source.finishReason() && !source.finishReason().equals(replay.finishReason()))
            {
                return "token streams differ: " + id + " finished " + replay.finishReason() + ", recorded " +
                    source.finishReason();
            }
            compared++;
        }
        return "token streams identical (" + compared + " of " + sources.size() + " requests, finish reasons " +
            "included)";
    }

    private static byte[] fetch(final String url) throws IOException, InterruptedException
    {
        final HttpResponse<byte[]> response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
            .followRedirects(HttpClient.Redirect.NORMAL).build().send(HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofMinutes(2)).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        if (200 != response.statusCode())
        {
            throw new IOException("HTTP " + response.statusCode());
        }
        return response.body();
    }

    private static String sha256(final byte[] bytes)
    {
        try
        {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
    }
}
