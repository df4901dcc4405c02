package dev.tapedeck.conformance;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToIntFunction;

import org.agrona.ExpandableDirectByteBuffer;

import dev.tapedeck.protocol.enginecore.EngineCoreOutputsEncoder;
import dev.tapedeck.protocol.enginecore.Handshake;
import dev.tapedeck.protocol.enginecore.SchedulerStats;
import dev.tapedeck.protocol.enginecore.UtilityCall;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.protocol.msgpack.MsgPackWriter;

/**
 * Encoder regression vectors, tapedeck's own bytes (the goldens of real engines are in {@code manifest.toml}, checked
 * by {@code inspect conformance}): for every supported vLLM line, the exact bytes tapedeck's engine sends in each kind
 * of message (handshake, registration, outputs with and without cached tokens and finishes, utility replies), from
 * fixed inputs. They live in {@code conformance/encoder-vectors/<line>/<name>.hex}; {@code EncoderVectorsTest} fails
 * when the codecs drift from them, and a change that is meant regenerates them:
 * <pre>
 *   java -cp ... dev.tapedeck.conformance.EncoderVectors conformance/encoder-vectors
 * </pre>
 */
public final class EncoderVectors
{
    private EncoderVectors()
    {
    }

    /**
     * @param line a vLLM line.
     * @return vector name to bytes, in a stable order.
     */
    public static Map<String, byte[]> forLine(final VllmLine line)
    {
        final Map<String, byte[]> vectors = new LinkedHashMap<>();
        final byte[] id = "chatcmpl-golden-0".getBytes(StandardCharsets.UTF_8);
        vectors.put("hello", encode(Handshake::hello));
        vectors.put("ready", encode(w -> Handshake.ready(w, 33600)));
        vectors.put("registration", encode(w -> Handshake.registration(w, new Handshake.Registration(8192, 33600,
            16, 256, 8192, 0, 1, line.version(), "tapedeck-golden", true, 4))));
        final SchedulerStats stats = new SchedulerStats();
        stats.numRunningReqs = 1;
        stats.stepCounter = 3;
        stats.kvCacheUsage = 0.25;
        stats.prefixCacheRequests = 1;
        stats.prefixCacheQueries = 32;
        stats.prefixCacheHits = 16;
        vectors.put("outputs-first-token-with-cached", outputs(line, e -> e.output(id, new int[] {9707}, 0, 1,
            EngineCoreOutputsEncoder.NO_FINISH, EngineCoreOutputsEncoder.NONE, null, 40, 16), stats, null));
        vectors.put("outputs-next-token", outputs(line, e -> e.output(id, new int[] {1879}, 0, 1,
            EngineCoreOutputsEncoder.NO_FINISH, EngineCoreOutputsEncoder.NONE, null, 40,
            EngineCoreOutputsEncoder.NONE), null, null));
        vectors.put("outputs-finish-length", outputs(line, e -> e.output(id, new int[] {11}, 0, 1, 1,
            EngineCoreOutputsEncoder.NONE, null, 40, EngineCoreOutputsEncoder.NONE), null, null));
        vectors.put("outputs-finish-stop-token", outputs(line, e -> e.output(id, new int[] {151645}, 0, 1, 0, 151645,
            null, 40, EngineCoreOutputsEncoder.NONE), null, null));
        vectors.put("outputs-aborted", outputs(line, e -> { }, null, new byte[][] {id}));
        vectors.put("utility-get-supported-tasks", encode(w ->
        {
            final UtilityCall call = new UtilityCall();
            final byte[] request = HexFormat.of().parseHex("9400cf8000000000000005b3" +
                HexFormat.of().formatHex("get_supported_tasks".getBytes(StandardCharsets.US_ASCII)) + "90");
            call.decode(new org.agrona.concurrent.UnsafeBuffer(request), 0, request.length);
            return call.writeReply(w, 0, 1.5, null, r -> r.arrayHeader(1).string("generate"));
        }));
        return vectors;
    }

    private static byte[] outputs(final VllmLine line, final java.util.function.Consumer<EngineCoreOutputsEncoder> body,
        final SchedulerStats stats, final byte[][] finished)
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(512);
        final EngineCoreOutputsEncoder encoder = new EngineCoreOutputsEncoder().begin(buffer, line, 0);
        body.accept(encoder);
        final int length = encoder.end(stats, 1.5, finished, null == finished ? 0 : finished.length);
        final byte[] bytes = new byte[length];
        buffer.getBytes(0, bytes);
        return bytes;
    }

    private static byte[] encode(final ToIntFunction<MsgPackWriter> encoder)
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(1024);
        final int length = encoder.applyAsInt(new MsgPackWriter().wrap(buffer, 0));
        final byte[] bytes = new byte[length];
        buffer.getBytes(0, bytes);
        return bytes;
    }

    /**
     * @param line a vLLM line.
     * @return its folder name under {@code encoder-vectors/}.
     */
    public static String folder(final VllmLine line)
    {
        return line.label().toLowerCase(Locale.ROOT);
    }

    /**
     * Write every line's vectors as lowercase hex files.
     *
     * @param args the target folder (default {@code conformance/encoder-vectors}).
     * @throws IOException when a file cannot be written.
     */
    public static void main(final String[] args) throws IOException
    {
        final Path root = Path.of(args.length > 0 ? args[0] : "conformance/encoder-vectors");
        for (final VllmLine line : VllmLine.values())
        {
            final Path dir = root.resolve(folder(line));
            Files.createDirectories(dir);
            for (final Map.Entry<String, byte[]> vector : forLine(line).entrySet())
            {
                Files.writeString(dir.resolve(vector.getKey() + ".hex"),
                    HexFormat.of().formatHex(vector.getValue()) + "\n");
            }
        }
        System.out.println("wrote encoder vectors for " + VllmLine.values().length + " lines to " + root);
    }
}
