package dev.tapedeck.protocol.enginecore;

import java.util.ArrayList;
import java.util.List;

import org.agrona.DirectBuffer;

import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.MsgPackWriter;
import dev.tapedeck.protocol.msgpack.ValueType;

/**
 * The engine's side of vLLM's startup handshake (docs/engine-core.md):
 * <pre>
 *   engine DEALER (identity = index, 2 bytes LE) ──HELLO──► frontend ROUTER
 *                                                ◄──INIT── {addresses: {inputs, outputs, coordinator_*}, ...}
 *   per inputs[i]: DEALER connect, send the registration payload; per outputs[i]: PUSH connect
 *   engine ──READY {num_gpu_blocks, ...}──► frontend
 * </pre>
 * Encoders write into a {@link MsgPackWriter}; {@link #decodeInit} reads INIT generically and keeps what an engine
 * needs. Control path only. Stateless.
 */
public final class Handshake
{
    /** The addresses INIT gives an engine. */
    public record Init(List<String> inputs, List<String> outputs, String coordinatorInput,
        String coordinatorOutput, String frontendStatsPublishAddress)
    {
    }

    /**
     * What the registration payload reports about the engine.
     *
     * @param maxModelLen context length (the frontend takes the smaller of its own and this).
     * @param numGpuBlocks KV blocks.
     * @param blockSize tokens per block.
     * @param maxNumSeqs running-set cap.
     * @param maxNumBatchedTokens step budget.
     * @param engineIndex this engine (its data-parallel rank).
     * @param dataParallelSize engines in the group.
     * @param vllmVersion version string.
     * @param instanceId unique id of this engine process.
     * @param supportsLora whether LoRA requests are accepted.
     * @param maxLoras LoRA slots.
     */
    public record Registration(int maxModelLen, int numGpuBlocks, int blockSize, int maxNumSeqs,
        int maxNumBatchedTokens, int engineIndex, int dataParallelSize, String vllmVersion, String instanceId,
        boolean supportsLora, int maxLoras)
    {
    }

    /** Keys in the registration payload. */
    static final int REGISTRATION_KEYS = 28;

    private Handshake()
    {
    }

    /**
     * @param writer where to write.
     * @return bytes written.
     */
    public static int hello(final MsgPackWriter writer)
    {
        writer.mapHeader(3).string("status").string("HELLO").string("local").bool(false)
            .string("headless").bool(true);
        return writer.length();
    }

    /**
     * READY, with {@code num_gpu_blocks} (required up to vLLM 0.18, ignored after) and {@code dp_stats_address}.
     *
     * @param writer where to write.
     * @param numGpuBlocks KV blocks.
     * @return bytes written.
     */
    public static int ready(final MsgPackWriter writer, final int numGpuBlocks)
    {
        writer.mapHeader(5).string("status").string("READY").string("local").bool(false)
            .string("headless").bool(true).string("num_gpu_blocks").int64(numGpuBlocks)
            .string("dp_stats_address").nil();
        return writer.length();
    }

    /**
     * The registration payload sent on each input socket: the union of every line's required keys (older
     * frontends ignore the payload or the keys they do not know).
     *
     * @param writer where to write.
     * @param r the values.
     * @return bytes written.
     */
    public static int registration(final MsgPackWriter writer, final Registration r)
    {
        writer.mapHeader(REGISTRATION_KEYS);
        writer.string("max_model_len").int64(r.maxModelLen());
        writer.string("num_gpu_blocks").int64(r.numGpuBlocks());
        writer.string("block_size").int64(r.blockSize());
        writer.string("dp_stats_address").nil();
        writer.string("dtype").string("bfloat16");
        writer.string("vllm_version").string(r.vllmVersion());
        writer.string("world_size").int64(1);
        writer.string("data_parallel_size").int64(r.dataParallelSize());
        writer.string("tensor_parallel_size").int64(1);
        writer.string("pipeline_parallel_size").int64(1);
        writer.string("decode_context_parallel_size").int64(1);
        writer.string("data_parallel_rank").int64(r.engineIndex());
        writer.string("max_num_seqs").int64(r.maxNumSeqs());
        writer.string("max_num_batched_tokens").int64(r.maxNumBatchedTokens());
        writer.string("instance_id").string(r.instanceId());
        writer.string("supports_lora").bool(r.supportsLora());
        writer.string("max_loras").int64(r.maxLoras());
        writer.string("kv_cache_size_tokens").int64((long)r.numGpuBlocks() * r.blockSize());
        writer.string("kv_cache_max_concurrency")
            .float64((double)r.numGpuBlocks() * r.blockSize() / Math.max(r.maxModelLen(), 1));
        writer.string("kv_events_config").nil();
        writer.string("mamba_block_size").nil();
        writer.string("weight_transfer_backend").nil();
        writer.string("enable_sleep_mode").bool(false);
        writer.string("supports_draft_weight_updates").bool(false);
        writer.string("effective_attention_block_size").nil();
        writer.string("coord_store_port").nil();
        writer.string("coordinator_input_address").nil();
        writer.string("coordinator_output_address").nil();
        return writer.length();
    }

    /**
     * @param buffer the INIT frame.
     * @param offset first byte.
     * @param length bytes.
     * @return the addresses.
     * @throws IllegalArgumentException when the frame is not an INIT.
     */
    public static Init decodeInit(final DirectBuffer buffer, final int offset, final int length)
    {
        final MsgPackReader reader = new MsgPackReader().wrap(buffer, offset, length);
        final int pairs = reader.readMapHeader();
        List<String> inputs = List.of();
        List<String> outputs = List.of();
        String coordinatorInput = null;
        String coordinatorOutput = null;
        String stats = null;
        boolean sawAddresses = false;
        for (int i = 0; i < pairs && reader.ok(); i++)
        {
            final String key = reader.readString();
            if (!"addresses".equals(key) || ValueType.MAP != reader.nextType())
            {
                reader.skipValue();
                continue;
            }
            sawAddresses = true;
            final int fields = reader.readMapHeader();
            for (int f = 0; f < fields && reader.ok(); f++)
            {
                final String name = reader.readString();
                if ("inputs".equals(name))
                {
                    inputs = readStrings(reader);
                }
                else if ("outputs".equals(name))
                {
                    outputs = readStrings(reader);
                }
                else if ("coordinator_input".equals(name))
                {
                    coordinatorInput = readOptionalString(reader);
                }
                else if ("coordinator_output".equals(name))
                {
                    coordinatorOutput = readOptionalString(reader);
                }
                else if ("frontend_stats_publish_address".equals(name))
                {
                    stats = readOptionalString(reader);
                }
                else
                {
                    reader.skipValue();
                }
            }
        }
        if (!reader.ok() || !sawAddresses || inputs.isEmpty() || inputs.size() != outputs.size())
        {
            throw new IllegalArgumentException("not a valid INIT message" +
                (reader.ok() ? "" : ": " + reader.errorMessage()));
        }
        return new Init(inputs, outputs, coordinatorInput, coordinatorOutput, stats);
    }

    /**
     * Read a HELLO or READY status (test frontends use it).
     *
     * @param buffer the frame.
     * @param offset first byte.
     * @param length bytes.
     * @return the {@code status} value, or null.
     */
    public static String status(final DirectBuffer buffer, final int offset, final int length)
    {
        final MsgPackReader reader = new MsgPackReader().wrap(buffer, offset, length);
        final int pairs = reader.readMapHeader();
        for (int i = 0; i < pairs && reader.ok(); i++)
        {
            if ("status".equals(reader.readString()))
            {
                return reader.readString();
            }
            reader.skipValue();
        }
        return null;
    }

    private static List<String> readStrings(final MsgPackReader reader)
    {
        final int count = reader.readArrayHeader();
        final List<String> values = new ArrayList<>(Math.max(count, 0));
        for (int i = 0; i < count; i++)
        {
            values.add(reader.readString());
        }
        return values;
    }

    private static String readOptionalString(final MsgPackReader reader)
    {
        return reader.tryReadNil() ? null : reader.readString();
    }
}
