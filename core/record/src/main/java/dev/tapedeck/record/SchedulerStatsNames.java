package dev.tapedeck.record;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Gives the fields of a {@code SchedulerStats} their names, for the step-stats sidecar.
 * <p>
 * vLLM's Python engine writes {@code SchedulerStats} as a dataclass, i.e. a msgpack map keyed by field name (so does
 * tapedeck's {@code play}); such a map is kept exactly as sent, whatever fields the engine's line has. An engine that
 * writes the struct positionally (a serde-based engine such as one built on vLLM's Rust {@code engine-core-client}
 * crate, which encodes structs as arrays) gets its fields named in that crate's order:
 * <pre>
 *   num_running_reqs, num_waiting_reqs, step_counter, current_wave, kv_cache_usage, encoder_cache_usage,
 *   prefix_cache_stats, connector_prefix_cache_stats, kv_cache_eviction_events, spec_decoding_stats,
 *   kv_connector_stats, waiting_lora_adapters, running_lora_adapters, cudagraph_stats, perf_stats
 * </pre>
 * with the nested structs (prefix cache, spec decoding, eviction events, CUDA graph, perf) named the same way. Each
 * position is checked against the kind of value it should hold; from the first that does not fit (a line with a
 * different layout), and for trailing fields the table does not know, fields are kept generically as
 * {@code field_<index>}. Nothing is dropped. Stateless; thread safe.
 */
public final class SchedulerStatsNames
{
    /** What a positional slot may hold. */
    private enum Kind
    {
        BOOLEAN, INTEGER, NUMBER, TEXT, OBJECT, OPTIONAL_OBJECT, LIST, OPTIONAL_MAP, MAP
    }

    private record Field(String name, Kind kind, List<Field> nested)
    {
        Field(final String name, final Kind kind)
        {
            this(name, kind, List.of());
        }
    }

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private static final List<Field> PREFIX_CACHE = List.of(new Field("reset", Kind.BOOLEAN),
        new Field("requests", Kind.INTEGER), new Field("queries", Kind.INTEGER), new Field("hits", Kind.INTEGER),
        new Field("preempted_requests", Kind.INTEGER), new Field("preempted_queries", Kind.INTEGER),
        new Field("preempted_hits", Kind.INTEGER));
    private static final List<Field> EVICTION = List.of(new Field("lifetime_seconds", Kind.NUMBER),
        new Field("idle_seconds", Kind.NUMBER), new Field("reuse_gaps_seconds", Kind.LIST));
    private static final List<Field> SPEC_DECODING = List.of(new Field("num_spec_tokens", Kind.INTEGER),
        new Field("num_drafts", Kind.INTEGER), new Field("num_draft_tokens", Kind.INTEGER),
        new Field("num_accepted_tokens", Kind.INTEGER), new Field("num_accepted_tokens_per_pos", Kind.LIST));
    private static final List<Field> CUDAGRAPH = List.of(new Field("num_unpadded_tokens", Kind.INTEGER),
        new Field("num_padded_tokens", Kind.INTEGER), new Field("num_paddings", Kind.INTEGER),
        new Field("runtime_mode", Kind.TEXT));
    private static final List<Field> PERF = List.of(new Field("num_flops_per_gpu", Kind.INTEGER),
        new Field("num_read_bytes_per_gpu", Kind.INTEGER), new Field("num_write_bytes_per_gpu", Kind.INTEGER),
        new Field("debug_stats", Kind.OPTIONAL_OBJECT));
    private static final List<Field> SCHEDULER = List.of(
        new Field("num_running_reqs", Kind.INTEGER),
        new Field("num_waiting_reqs", Kind.INTEGER),
        new Field("step_counter", Kind.INTEGER),
        new Field("current_wave", Kind.INTEGER),
        new Field("kv_cache_usage", Kind.NUMBER),
        new Field("encoder_cache_usage", Kind.NUMBER),
        new Field("prefix_cache_stats", Kind.OBJECT, PREFIX_CACHE),
        new Field("connector_prefix_cache_stats", Kind.OPTIONAL_OBJECT, PREFIX_CACHE),
        new Field("kv_cache_eviction_events", Kind.LIST, EVICTION),
        new Field("spec_decoding_stats", Kind.OPTIONAL_OBJECT, SPEC_DECODING),
        new Field("kv_connector_stats", Kind.OPTIONAL_MAP),
        new Field("waiting_lora_adapters", Kind.MAP),
        new Field("running_lora_adapters", Kind.MAP),
        new Field("cudagraph_stats", Kind.OPTIONAL_OBJECT, CUDAGRAPH),
        new Field("perf_stats", Kind.OPTIONAL_OBJECT, PERF));

    private SchedulerStatsNames()
    {
    }

    /**
     * @param stats the {@code scheduler_stats} value as sent (a map, or a positional array).
     * @return an object with named fields (a map is returned as it is).
     */
    public static JsonNode named(final JsonNode stats)
    {
        if (stats.isArray())
        {
            return name(stats, SCHEDULER);
        }
        return stats;
    }

    /**
     * @param stats the {@code scheduler_stats} value as sent.
     * @return {@code num_running_reqs}, or -1 when the stats do not carry it.
     */
    public static int numRunningReqs(final JsonNode stats)
    {
        final JsonNode value = stats.isArray() ? stats.get(0) : stats.get("num_running_reqs");
        return null != value && value.canConvertToInt() && value.isIntegralNumber() ? value.intValue() : -1;
    }

    private static ObjectNode name(final JsonNode positional, final List<Field> fields)
    {
        final ObjectNode named = NODES.objectNode();
        boolean layoutFits = true;
        for (int i = 0; i < positional.size(); i++)
        {
            final JsonNode value = positional.get(i);
            final Field field = i < fields.size() ? fields.get(i) : null;
            layoutFits &= null != field && fits(value, field.kind());
            if (layoutFits)
            {
                named.set(field.name(), nested(value, field));
            }
            else
            {
                named.set("field_" + i, value);
            }
        }
        return named;
    }

    private static JsonNode nested(final JsonNode value, final Field field)
    {
        if (field.nested().isEmpty())
        {
            return value;
        }
        if (Kind.LIST == field.kind())
        {
            final ArrayNode list = NODES.arrayNode();
            value.forEach(element -> list.add(element.isArray() ? name(element, field.nested()) : element));
            return list;
        }
        return value.isArray() ? name(value, field.nested()) : value;
    }

    private static boolean fits(final JsonNode value, final Kind kind)
    {
        switch (kind)
        {
            case BOOLEAN:
                return value.isBoolean();
            case INTEGER:
                return value.isIntegralNumber();
            case TEXT:
                return value.isTextual();
            case NUMBER:
                return value.isNumber();
            case OBJECT:
                return value.isArray() || value.isObject();
            case OPTIONAL_OBJECT:
                return value.isNull() || value.isArray() || value.isObject();
            case LIST:
                return value.isArray();
            case OPTIONAL_MAP:
                return value.isNull() || value.isObject();
            default:
                return value.isObject();
        }
    }
}
