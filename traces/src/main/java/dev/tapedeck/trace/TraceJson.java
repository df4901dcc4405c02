package dev.tapedeck.trace;

import java.io.IOException;
import java.math.BigInteger;
import java.util.Map;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The JSON form of meta lines and records, read and written with Jackson's streaming API. Field names, order and
 * types follow vllm-vcr's schema; unknown fields go to and come from the objects' {@code extra} maps.
 * Stateless apart from the shared Jackson factory; safe to use from several threads.
 */
final class TraceJson
{
    static final ObjectMapper MAPPER = new ObjectMapper();
    static final JsonFactory FACTORY = MAPPER.getFactory();
    private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);

    private TraceJson()
    {
    }

    /**
     * Read the meta object (the value of the {@code meta} key); the parser is at its START_OBJECT.
     */
    static TraceMeta readMeta(final JsonParser parser) throws IOException
    {
        expect(parser, JsonToken.START_OBJECT, "meta", "an object");
        final TraceMeta meta = new TraceMeta();
        while (JsonToken.FIELD_NAME == parser.nextToken())
        {
            final String name = parser.currentName();
            final JsonToken value = parser.nextToken();
            if (JsonToken.VALUE_NULL == value)
            {
                continue;
            }
            switch (name)
            {
                case "model" -> meta.model(string(parser, name));
                case "gpu" -> meta.gpu(string(parser, name));
                case "tp" -> meta.tp(natural(parser, name));
                case "max_num_seqs" -> meta.maxNumSeqs(natural(parser, name));
                case "source" -> meta.source(string(parser, name));
                case "block_size" -> meta.blockSize(natural(parser, name));
                case "config_hash" -> meta.configHash(string(parser, name));
                case "vllm_version" -> meta.vllmVersion(string(parser, name));
                case "ready_response_hex" -> meta.readyResponseHex(string(parser, name));
                default -> meta.extra().put(name, MAPPER.readTree(parser));
            }
        }
        return meta;
    }

    /**
     * Read a record object; the parser is at its START_OBJECT. Checks types, not cross-field rules.
     */
    static TraceRecord readRecord(final JsonParser parser) throws IOException
    {
        expect(parser, JsonToken.START_OBJECT, "record", "an object");
        final TraceRecord record = new TraceRecord();
        while (JsonToken.FIELD_NAME == parser.nextToken())
        {
            final String name = parser.currentName();
            final JsonToken value = parser.nextToken();
            if (JsonToken.VALUE_NULL == value)
            {
                continue;
            }
            switch (name)
            {
                case "prompt_tokens" -> record.promptTokens(natural(parser, name));
                case "cached_tokens" -> record.cachedTokens(natural(parser, name));
                case "output_tokens" -> record.outputTokens(natural(parser, name));
                case "ttft_ms" -> record.ttftMs(number(parser, name));
                case "itl_ms" -> record.itlMs(numbers(parser, name));
                case "itl_tokens" -> record.itlTokens(ints(parser, name));
                case "itl_summary" -> record.itlSummary(readSummary(parser));
                case "concurrency" -> record.concurrency(natural(parser, name));
                case "arrival_ms" -> record.arrivalMs(number(parser, name));
                case "e2e_ms" -> record.e2eMs(number(parser, name));
                case "itl_ctx" -> record.itlContext(readContext(parser));
                case "block_hashes" -> record.blockHashes(unsignedLongs(parser, name));
                case "mm_hashes" -> record.mmHashes(strings(parser, name));
                case "output_token_ids" -> record.outputTokenIds(ints(parser, name));
                case "finish_reason" -> record.finishReason(string(parser, name));
                default -> record.extra().put(name, MAPPER.readTree(parser));
            }
        }
        return record;
    }

    static void writeMeta(final JsonGenerator out, final TraceMeta meta) throws IOException
    {
        out.writeStartObject();
        out.writeFieldName("meta");
        out.writeStartObject();
        writeString(out, "model", meta.model());
        writeString(out, "gpu", meta.gpu());
        writeLong(out, "tp", meta.tp());
        writeLong(out, "max_num_seqs", meta.maxNumSeqs());
        writeString(out, "source", meta.source());
        writeLong(out, "block_size", meta.blockSize());
        writeString(out, "config_hash", meta.configHash());
        writeString(out, "vllm_version", meta.vllmVersion());
        writeString(out, "ready_response_hex", meta.readyResponseHex());
        writeExtra(out, meta.extra());
        out.writeEndObject();
        out.writeEndObject();
    }

    static void writeRecord(final JsonGenerator out, final TraceRecord record) throws IOException
    {
        out.writeStartObject();
        out.writeNumberField("prompt_tokens", record.promptTokens());
        if (record.hasCachedTokens())
        {
            out.writeNumberField("cached_tokens", record.cachedTokens());
        }
        if (record.outputTokens() >= 0)
        {
            out.writeNumberField("output_tokens", record.outputTokens());
        }
        if (!Double.isNaN(record.ttftMs()))
        {
            out.writeNumberField("ttft_ms", record.ttftMs());
        }
        if (null != record.itlMs())
        {
            out.writeFieldName("itl_ms");
            out.writeArray(record.itlMs(), 0, record.itlMs().length);
        }
        writeInts(out, "itl_tokens", record.itlTokens());
        if (null != record.itlSummary())
        {
            out.writeObjectFieldStart("itl_summary");
            out.writeNumberField("mean_ms", record.itlSummary().meanMs());
            out.writeNumberField("count", record.itlSummary().count());
            out.writeEndObject();
        }
        if (record.hasConcurrency())
        {
            out.writeNumberField("concurrency", record.concurrency());
        }
        if (null != record.arrivalMs())
        {
            out.writeNumberField("arrival_ms", record.arrivalMs());
        }
        if (null != record.e2eMs())
        {
            out.writeNumberField("e2e_ms", record.e2eMs());
        }
        if (null != record.itlContext())
        {
            out.writeObjectFieldStart("itl_ctx");
            writeInts(out, "num_running", record.itlContext().numRunning());
            writeInts(out, "prefill_tokens", record.itlContext().prefillTokens());
            out.writeEndObject();
        }
        if (null != record.blockHashes())
        {
            out.writeArrayFieldStart("block_hashes");
            for (final long hash : record.blockHashes())
            {
                out.writeNumber(Long.toUnsignedString(hash));
            }
            out.writeEndArray();
        }
        if (null != record.mmHashes())
        {
            out.writeArrayFieldStart("mm_hashes");
            for (final String hash : record.mmHashes())
            {
                out.writeString(hash);
            }
            out.writeEndArray();
        }
        writeInts(out, "output_token_ids", record.outputTokenIds());
        writeString(out, "finish_reason", record.finishReason());
        writeExtra(out, record.extra());
        out.writeEndObject();
    }

    private static TraceRecord.ItlSummary readSummary(final JsonParser parser) throws IOException
    {
        expect(parser, JsonToken.START_OBJECT, "itl_summary", "an object {mean_ms, count}");
        double meanMs = Double.NaN;
        long count = -1;
        while (JsonToken.FIELD_NAME == parser.nextToken())
        {
            final String name = parser.currentName();
            parser.nextToken();
            if ("mean_ms".equals(name))
            {
                meanMs = number(parser, "itl_summary.mean_ms");
            }
            else if ("count".equals(name))
            {
                count = natural(parser, "itl_summary.count");
            }
            else
            {
                parser.skipChildren();
            }
        }
        if (Double.isNaN(meanMs) || count < 0)
        {
            throw new TraceFormatException("itl_summary needs mean_ms and count");
        }
        return new TraceRecord.ItlSummary(meanMs, count);
    }

    private static TraceRecord.ItlContext readContext(final JsonParser parser) throws IOException
    {
        expect(parser, JsonToken.START_OBJECT, "itl_ctx", "an object {num_running, prefill_tokens}");
        int[] running = null;
        int[] prefill = null;
        while (JsonToken.FIELD_NAME == parser.nextToken())
        {
            final String name = parser.currentName();
            parser.nextToken();
            if ("num_running".equals(name))
            {
                running = ints(parser, "itl_ctx.num_running");
            }
            else if ("prefill_tokens".equals(name))
            {
                prefill = ints(parser, "itl_ctx.prefill_tokens");
            }
            else
            {
                parser.skipChildren();
            }
        }
        if (null == running || null == prefill)
        {
            throw new TraceFormatException("itl_ctx needs num_running and prefill_tokens");
        }
        return new TraceRecord.ItlContext(running, prefill);
    }

    private static void expect(final JsonParser parser, final JsonToken token, final String field, final String what)
    {
        if (token != parser.currentToken())
        {
            throw new TraceFormatException(field + " must be " + what + ", got " + describe(parser));
        }
    }

    private static String string(final JsonParser parser, final String field) throws IOException
    {
        if (JsonToken.VALUE_STRING != parser.currentToken())
        {
            throw new TraceFormatException(field + " must be a string, got " + describe(parser));
        }
        return parser.getText();
    }

    private static long natural(final JsonParser parser, final String field) throws IOException
    {
        final JsonToken token = parser.currentToken();
        if (JsonToken.VALUE_NUMBER_INT == token && JsonParser.NumberType.BIG_INTEGER != parser.getNumberType() &&
            parser.getLongValue() >= 0)
        {
            return parser.getLongValue();
        }
        if (JsonToken.VALUE_NUMBER_FLOAT == token && parser.getDoubleValue() >= 0 &&
            parser.getDoubleValue() == Math.rint(parser.getDoubleValue()) && parser.getDoubleValue() < 0x1p63)
        {
            return (long)parser.getDoubleValue(); // 12.0 from writers that print every number as a float
        }
        throw new TraceFormatException(field + " must be a non-negative integer, got " + describe(parser));
    }

    private static double number(final JsonParser parser, final String field) throws IOException
    {
        final JsonToken token = parser.currentToken();
        if (JsonToken.VALUE_NUMBER_INT != token && JsonToken.VALUE_NUMBER_FLOAT != token)
        {
            throw new TraceFormatException(field + " must be a number, got " + describe(parser));
        }
        final double value = parser.getDoubleValue();
        if (!Double.isFinite(value))
        {
            throw new TraceFormatException(field + " must be finite, got " + parser.getText());
        }
        return value;
    }

    private static double[] numbers(final JsonParser parser, final String field) throws IOException
    {
        expect(parser, JsonToken.START_ARRAY, field, "an array of numbers");
        double[] values = new double[16];
        int count = 0;
        while (JsonToken.END_ARRAY != parser.nextToken())
        {
            if (count == values.length)
            {
                values = java.util.Arrays.copyOf(values, count * 2);
            }
            values[count++] = number(parser, field + "[" + count + "]");
        }
        return java.util.Arrays.copyOf(values, count);
    }

    private static int[] ints(final JsonParser parser, final String field) throws IOException
    {
        expect(parser, JsonToken.START_ARRAY, field, "an array of non-negative integers");
        int[] values = new int[16];
        int count = 0;
        while (JsonToken.END_ARRAY != parser.nextToken())
        {
            final long value = natural(parser, field + "[" + count + "]");
            if (value > 0xFFFF_FFFFL)
            {
                throw new TraceFormatException(field + "[" + count + "] does not fit 32 bits: " + value);
            }
            if (count == values.length)
            {
                values = java.util.Arrays.copyOf(values, count * 2);
            }
            values[count++] = (int)value;
        }
        return java.util.Arrays.copyOf(values, count);
    }

    private static long[] unsignedLongs(final JsonParser parser, final String field) throws IOException
    {
        expect(parser, JsonToken.START_ARRAY, field, "an array of unsigned 64-bit integers");
        long[] values = new long[16];
        int count = 0;
        while (JsonToken.END_ARRAY != parser.nextToken())
        {
            if (JsonToken.VALUE_NUMBER_INT != parser.currentToken())
            {
                throw new TraceFormatException(field + "[" + count + "] must be an unsigned 64-bit integer, got " +
                    describe(parser));
            }
            final BigInteger value = parser.getBigIntegerValue();
            if (value.signum() < 0 || value.compareTo(TWO_TO_64) >= 0)
            {
                throw new TraceFormatException(field + "[" + count + "] is not an unsigned 64-bit integer: " + value);
            }
            if (count == values.length)
            {
                values = java.util.Arrays.copyOf(values, count * 2);
            }
            values[count++] = value.longValue();
        }
        return java.util.Arrays.copyOf(values, count);
    }

    private static String[] strings(final JsonParser parser, final String field) throws IOException
    {
        expect(parser, JsonToken.START_ARRAY, field, "an array of strings");
        final java.util.List<String> values = new java.util.ArrayList<>();
        while (JsonToken.END_ARRAY != parser.nextToken())
        {
            values.add(string(parser, field + "[" + values.size() + "]"));
        }
        return values.toArray(new String[0]);
    }

    private static void writeString(final JsonGenerator out, final String name, final String value)
        throws IOException
    {
        if (null != value)
        {
            out.writeStringField(name, value);
        }
    }

    private static void writeLong(final JsonGenerator out, final String name, final Long value) throws IOException
    {
        if (null != value)
        {
            out.writeNumberField(name, value);
        }
    }

    private static void writeInts(final JsonGenerator out, final String name, final int[] values) throws IOException
    {
        if (null != values)
        {
            out.writeArrayFieldStart(name);
            for (final int value : values)
            {
                out.writeNumber(Integer.toUnsignedLong(value));
            }
            out.writeEndArray();
        }
    }

    private static void writeExtra(final JsonGenerator out, final Map<String, JsonNode> extra) throws IOException
    {
        for (final Map.Entry<String, JsonNode> entry : extra.entrySet())
        {
            out.writeFieldName(entry.getKey());
            MAPPER.writeTree(out, entry.getValue());
        }
    }

    private static String describe(final JsonParser parser)
    {
        final JsonToken token = parser.currentToken();
        if (null == token)
        {
            return "nothing";
        }
        return switch (token)
        {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> textOf(parser);
        };
    }

    private static String textOf(final JsonParser parser)
    {
        try
        {
            return parser.getText();
        }
        catch (final IOException ex)
        {
            return parser.currentToken().toString();
        }
    }
}
