package dev.tapedeck.structured;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.net.JsonBytes;

/**
 * Writes a random JSON value that validates against a JSON Schema: what a model under vLLM's structured-output
 * decoding produces for a tool's parameters or a {@code json_schema} response format. Output is in the style models
 * write ({@code {"key": value, "other": value}}, Python's separators) so token counts look like theirs.
 * <p>
 * Honoured: {@code type} (one or a list), {@code enum}, {@code const}, {@code properties}, {@code required},
 * {@code additionalProperties}, {@code items}, {@code prefixItems}, {@code minItems}/{@code maxItems},
 * {@code minimum}/{@code maximum} and their exclusive forms, {@code multipleOf} (integers),
 * {@code minLength}/{@code maxLength}, {@code format} (date-time, date, time, email, uri, uuid, ipv4, hostname),
 * {@code pattern} (through {@link RegexSampler}), {@code anyOf}/{@code oneOf} (one branch), {@code allOf} (merged),
 * local {@code $ref}s ({@code #/$defs/..}, {@code #/definitions/..}, {@code #}) and {@code default}. Optional
 * properties appear with probability one half. A schema it cannot satisfy yields its nearest try (the caller's
 * validator, in tests, says so); recursion stops at a depth of 8 by taking the cheapest branch.
 * <p>
 * Not thread safe: one per request, on the thread that prepares it.
 */
public final class JsonSampler
{
    private static final String[] WORDS = {
        "alpha", "river", "stone", "cloud", "amber", "north", "signal", "garden", "copper", "harbor", "maple",
        "orbit", "silver", "meadow", "canyon", "lantern", "violet", "summit", "ember", "willow", "coral", "falcon",
        "prairie", "quartz", "tundra", "beacon", "cedar", "delta", "glacier", "island",
    };
    private static final int MAX_DEPTH = 8;
    /** Past this depth every value is the cheapest one its type allows: recursion always ends. */
    private static final int HARD_DEPTH = 24;
    /** Past this many characters, optional content stops; counts and lengths are held below it. */
    private static final int MAX_CHARS = 32 * 1024;
    private static final int MAX_COUNT = 1000;

    private final SeededRandom random;
    private final JsonNode root;
    private final StringBuilder out = new StringBuilder(128);

    private JsonSampler(final JsonNode root, final SeededRandom random)
    {
        this.root = root;
        this.random = random;
    }

    /**
     * @param schema a JSON Schema (null or {@code {}} for any object).
     * @param random the request's random source.
     * @return JSON text that validates against the schema.
     */
    public static String sample(final JsonNode schema, final SeededRandom random)
    {
        final JsonNode root = null == schema || schema.isNull() ? JsonNodeFactory.instance.objectNode() : schema;
        final JsonSampler sampler = new JsonSampler(root, random);
        if (root.isObject() && root.isEmpty())
        {
            sampler.anyObject();
        }
        else
        {
            sampler.value(root, 0);
        }
        return sampler.out.toString();
    }

    private void value(final JsonNode schema, final int depth)
    {
        final JsonNode resolved = resolve(schema);
        if (depth >= HARD_DEPTH || out.length() > MAX_CHARS)
        {
            cheapest(resolved);
            return;
        }
        if (resolved.isBoolean())
        {
            // true: anything (a word); false: nothing validates, and null is as near as any
            out.append(resolved.asBoolean() ? JsonBytes.quote(WORDS[random.nextInt(WORDS.length)]) : "null");
            return;
        }
        if (resolved.has("const"))
        {
            out.append(resolved.get("const").toString());
            return;
        }
        final JsonNode enumeration = resolved.get("enum");
        if (null != enumeration && enumeration.isArray() && !enumeration.isEmpty())
        {
            out.append(enumeration.get(random.nextInt(enumeration.size())).toString());
            return;
        }
        final JsonNode branches = firstPresent(resolved, "anyOf", "oneOf");
        if (null != branches && branches.isArray() && !branches.isEmpty())
        {
            value(branch(branches, depth), depth + 1);
            return;
        }
        final JsonNode allOf = resolved.get("allOf");
        if (null != allOf && allOf.isArray())
        {
            value(merge(resolved, allOf), depth + 1);
            return;
        }
        switch (type(resolved, depth))
        {
            case "object" -> object(resolved, depth);
            case "array" -> array(resolved, depth);
            case "integer" -> integer(resolved);
            case "number" -> number(resolved);
            case "boolean" -> out.append(random.nextInt(2) == 0 ? "true" : "false");
            case "null" -> out.append("null");
            default -> string(resolved);
        }
    }

    /**
     * The shortest value the schema's type allows, without looking inside it: {@code null} when allowed, else an
     * empty object, list or string, or the smallest number (a recursive schema's required parts are not written).
     */
    private void cheapest(final JsonNode schema)
    {
        if (schema.has("const"))
        {
            out.append(schema.get("const").toString());
            return;
        }
        if (schema.path("enum").isArray() && !schema.path("enum").isEmpty())
        {
            out.append(schema.get("enum").get(0).toString());
            return;
        }
        final JsonNode type = schema.get("type");
        final List<String> types = new ArrayList<>();
        if (null != type && type.isTextual())
        {
            types.add(type.asText());
        }
        else if (null != type && type.isArray())
        {
            type.forEach(t -> types.add(t.asText()));
        }
        final String first = types.contains("null") ? "null" : types.isEmpty() ? (schema.has("items") ? "array" :
            "object") : types.get(0);
        out.append(switch (first)
        {
            case "null" -> "null";
            case "array" -> "[]";
            case "string" -> "\"\"";
            case "integer", "number" -> schema.path("minimum").isNumber() ? Long.toString((long)Math.ceil(
                schema.get("minimum").asDouble())) : "0";
            case "boolean" -> "false";
            default -> "{}";
        });
    }

    private String type(final JsonNode schema, final int depth)
    {
        final JsonNode type = schema.get("type");
        if (null != type && type.isTextual())
        {
            return type.asText();
        }
        if (null != type && type.isArray() && !type.isEmpty())
        {
            final List<String> choices = new ArrayList<>();
            type.forEach(t -> choices.add(t.asText()));
            if (depth >= MAX_DEPTH && choices.contains("null"))
            {
                return "null";
            }
            // a model fills a nullable field with a value more often than with null
            final List<String> values = choices.stream().filter(t -> !"null".equals(t)).toList();
            return values.isEmpty() || random.nextInt(4) == 0 ? choices.get(random.nextInt(choices.size())) :
                values.get(random.nextInt(values.size()));
        }
        if (schema.has("properties") || schema.has("additionalProperties") || schema.has("required"))
        {
            return "object";
        }
        if (schema.has("items") || schema.has("prefixItems"))
        {
            return "array";
        }
        if (schema.has("minimum") || schema.has("maximum"))
        {
            return "number";
        }
        return "string";
    }

    private void object(final JsonNode schema, final int depth)
    {
        final JsonNode properties = schema.path("properties");
        final List<String> required = new ArrayList<>();
        schema.path("required").forEach(r -> required.add(r.asText()));
        out.append('{');
        boolean first = true;
        for (final Map.Entry<String, JsonNode> field : properties.properties())
        {
            final boolean needed = required.contains(field.getKey());
            if (!needed && (depth >= MAX_DEPTH || random.nextInt(2) == 0))
            {
                continue;
            }
            first = key(first, field.getKey());
            value(field.getValue(), depth + 1);
        }
        for (final String name : required)
        {
            if (!properties.has(name))
            {
                first = key(first, name);
                final JsonNode additional = schema.get("additionalProperties");
                value(null != additional && additional.isObject() ? additional : stringSchema(), depth + 1);
            }
        }
        out.append('}');
    }

    private boolean key(final boolean first, final String name)
    {
        if (!first)
        {
            out.append(", ");
        }
        out.append(JsonBytes.quote(name)).append(": ");
        return false;
    }

    private void array(final JsonNode schema, final int depth)
    {
        final JsonNode prefix = schema.get("prefixItems");
        final JsonNode items = schema.get("items");
        final int prefixCount = null != prefix && prefix.isArray() ? prefix.size() : 0;
        final int min = Math.min(MAX_COUNT, Math.max(schema.path("minItems").asInt(0), items != null &&
            items.isBoolean() && !items.asBoolean() ? prefixCount : 0));
        int max = Math.min(min + 3, schema.has("maxItems") ? schema.get("maxItems").asInt() : Math.max(min, 3));
        if (null != items && items.isBoolean() && !items.asBoolean())
        {
            max = Math.min(max, prefixCount);
        }
        final int count = depth >= MAX_DEPTH || out.length() > MAX_CHARS / 2 ? min :
            min + random.nextInt(Math.max(1, max - min + 1));
        out.append('[');
        for (int i = 0; i < count; i++)
        {
            if (i > 0)
            {
                out.append(", ");
            }
            if (i < prefixCount)
            {
                value(prefix.get(i), depth + 1);
            }
            else
            {
                value(null == items || !items.isObject() ? stringSchema() : items, depth + 1);
            }
        }
        out.append(']');
    }

    private void integer(final JsonNode schema)
    {
        // bounds held within +-2^52, where doubles are exact and high - low + 1 cannot overflow
        final double limit = 0x1p52;
        long low = schema.has("minimum") ? (long)Math.max(-limit, Math.ceil(schema.get("minimum").asDouble())) : 0;
        long high = schema.has("maximum") ? (long)Math.min(limit, Math.floor(schema.get("maximum").asDouble())) :
            low + 100;
        if (schema.has("exclusiveMinimum") && schema.get("exclusiveMinimum").isNumber())
        {
            low = Math.max(low, (long)Math.floor(schema.get("exclusiveMinimum").asDouble()) + 1);
        }
        if (schema.has("exclusiveMaximum") && schema.get("exclusiveMaximum").isNumber())
        {
            high = Math.min(high, (long)Math.ceil(schema.get("exclusiveMaximum").asDouble()) - 1);
        }
        if (!schema.has("maximum") && !schema.has("exclusiveMaximum"))
        {
            high = low + 100;
        }
        if (!schema.has("minimum") && !schema.has("exclusiveMinimum") && (schema.has("maximum") ||
            schema.has("exclusiveMaximum")))
        {
            low = Math.min(0, high) - (high > 100 ? 0 : 100 - Math.max(0, high));
            low = Math.min(low, high);
        }
        high = Math.max(low, high);
        long value = low + (long)(random.nextDouble() * (high - low + 1));
        value = Math.min(value, high);
        final long step = schema.path("multipleOf").asLong(0);
        if (step > 0)
        {
            value = Math.floorDiv(value, step) * step;
            if (value < low)
            {
                value += step;
            }
        }
        out.append(value);
    }

    private void number(final JsonNode schema)
    {
        final double limit = 1e15;
        final double low = Math.max(-limit, schema.has("minimum") ? schema.get("minimum").asDouble() :
            schema.path("exclusiveMinimum").isNumber() ? schema.get("exclusiveMinimum").asDouble() : 0);
        final double high = Math.min(limit, schema.has("maximum") ? schema.get("maximum").asDouble() :
            schema.path("exclusiveMaximum").isNumber() ? schema.get("exclusiveMaximum").asDouble() : low + 100);
        // two decimals, strictly inside the bounds when they are exclusive
        double value = Math.round((low + random.nextDouble() * Math.max(0, high - low)) * 100) / 100.0;
        if (value <= low && schema.path("exclusiveMinimum").isNumber() || value < low)
        {
            value = low + (high - low) / 2;
        }
        if (value >= high && schema.path("exclusiveMaximum").isNumber() || value > high)
        {
            value = low + (high - low) / 2;
        }
        out.append(value);
    }

    private void string(final JsonNode schema)
    {
        final int minLength = Math.min(MAX_CHARS, schema.path("minLength").asInt(0));
        final int maxLength = schema.has("maxLength") ? schema.get("maxLength").asInt() : Integer.MAX_VALUE;
        final String pattern = schema.path("pattern").asText(null);
        String text;
        if (null != pattern)
        {
            text = RegexSampler.sample(pattern, random, Math.min(maxLength, 64));
        }
        else
        {
            text = formatted(schema.path("format").asText(""));
            if (null == text)
            {
                final StringBuilder words = new StringBuilder();
                final int count = 1 + random.nextInt(4);
                for (int i = 0; i < count || words.length() < minLength; i++)
                {
                    words.append(0 == i ? "" : " ").append(WORDS[random.nextInt(WORDS.length)]);
                }
                text = words.toString();
            }
            if (text.length() > maxLength)
            {
                text = text.substring(0, maxLength);
            }
        }
        out.append(JsonBytes.quote(text));
    }

    private String formatted(final String format)
    {
        final int day = 1 + random.nextInt(28);
        final int month = 1 + random.nextInt(12);
        final int hour = random.nextInt(24);
        final int minute = random.nextInt(60);
        return switch (format)
        {
            case "date-time" -> String.format("2026-%02d-%02dT%02d:%02d:00Z", month, day, hour, minute);
            case "date" -> String.format("2026-%02d-%02d", month, day);
            case "time" -> String.format("%02d:%02d:00Z", hour, minute);
            case "email" -> WORDS[random.nextInt(WORDS.length)] + "@example.com";
            case "uri", "url" -> "https://example.com/" + WORDS[random.nextInt(WORDS.length)];
            case "hostname" -> WORDS[random.nextInt(WORDS.length)] + ".example.com";
            case "ipv4" -> "10." + random.nextInt(256) + "." + random.nextInt(256) + "." + random.nextInt(256);
            case "uuid" -> uuid();
            default -> null;
        };
    }

    private String uuid()
    {
        final String hex = String.format("%016x%016x", random.nextLong(), random.nextLong());
        return hex.substring(0, 8) + "-" + hex.substring(8, 12) + "-4" + hex.substring(13, 16) + "-a" +
            hex.substring(17, 20) + "-" + hex.substring(20, 32);
    }

    private void anyObject()
    {
        out.append('{');
        final int count = 1 + random.nextInt(3);
        for (int i = 0; i < count; i++)
        {
            key(0 == i, WORDS[(i * 7 + random.nextInt(7)) % WORDS.length] + "_" + i);
            string(JsonNodeFactory.instance.objectNode());
        }
        out.append('}');
    }

    /**
     * One branch of an {@code anyOf}: a random one, or past the depth limit one that does not recurse.
     */
    private JsonNode branch(final JsonNode branches, final int depth)
    {
        if (depth < MAX_DEPTH)
        {
            return branches.get(random.nextInt(branches.size()));
        }
        for (final JsonNode candidate : branches)
        {
            final JsonNode resolved = resolve(candidate);
            if (!resolved.has("$ref") && !"object".equals(resolved.path("type").asText()) &&
                !"array".equals(resolved.path("type").asText()))
            {
                return candidate;
            }
        }
        return branches.get(0);
    }

    private static ObjectNode merge(final JsonNode schema, final JsonNode allOf)
    {
        final ObjectNode merged = JsonNodeFactory.instance.objectNode();
        final Map<String, JsonNode> properties = new LinkedHashMap<>();
        final List<JsonNode> required = new ArrayList<>();
        final List<JsonNode> parts = new ArrayList<>();
        allOf.forEach(parts::add);
        final ObjectNode rest = schema.deepCopy();
        rest.remove("allOf");
        parts.add(rest);
        for (final JsonNode part : parts)
        {
            part.properties().forEach(field ->
            {
                switch (field.getKey())
                {
                    case "properties" -> field.getValue().properties().forEach(p ->
                        properties.put(p.getKey(), p.getValue()));
                    case "required" -> field.getValue().forEach(required::add);
                    default -> merged.set(field.getKey(), field.getValue());
                }
            });
        }
        if (!properties.isEmpty())
        {
            merged.putObject("properties").setAll(properties);
        }
        if (!required.isEmpty())
        {
            merged.putArray("required").addAll(required);
        }
        return merged;
    }

    private JsonNode resolve(final JsonNode schema)
    {
        JsonNode current = schema;
        for (int hops = 0; hops < 16 && current.isObject() && current.has("$ref"); hops++)
        {
            final String ref = current.get("$ref").asText();
            if (!ref.startsWith("#"))
            {
                return stringSchema();
            }
            final String pointer = ref.substring(1);
            if (!pointer.isEmpty() && !pointer.startsWith("/"))
            {
                return stringSchema(); // an $anchor: not followed
            }
            final JsonNode target = root.at(pointer);
            if (target.isMissingNode())
            {
                return stringSchema();
            }
            current = target;
        }
        return current;
    }

    private static JsonNode firstPresent(final JsonNode schema, final String first, final String second)
    {
        return schema.has(first) ? schema.get(first) : schema.get(second);
    }

    private static JsonNode stringSchema()
    {
        return JsonNodeFactory.instance.objectNode().put("type", "string");
    }
}
