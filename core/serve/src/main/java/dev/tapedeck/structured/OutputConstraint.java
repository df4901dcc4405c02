package dev.tapedeck.structured;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.net.JsonBytes;

/**
 * A structured-output constraint on a request's text, as vLLM's guided decoding enforces it:
 * {@code response_format} {@code json_object} or {@code json_schema}, {@code structured_outputs} ({@code json},
 * {@code regex}, {@code choice}, {@code json_object}) and the older {@code guided_json}, {@code guided_regex},
 * {@code guided_choice}. The simulated model's text is a sample that satisfies it. Immutable.
 *
 * @param kind what the text must be.
 * @param schema the JSON Schema ({@link Kind#JSON_SCHEMA}), else null.
 * @param regex the regular expression ({@link Kind#REGEX}), else null.
 * @param choices the allowed texts ({@link Kind#CHOICE}), else null.
 */
public record OutputConstraint(Kind kind, JsonNode schema, String regex, List<String> choices)
{
    /** What the text must be. */
    public enum Kind
    {
        /** Any JSON object. */
        JSON_OBJECT,
        /** JSON that validates against {@link #schema()}. */
        JSON_SCHEMA,
        /** A full match of {@link #regex()}. */
        REGEX,
        /** One of {@link #choices()}. */
        CHOICE
    }

    /**
     * @param schema a JSON Schema.
     * @return the constraint.
     */
    public static OutputConstraint jsonSchema(final JsonNode schema)
    {
        return new OutputConstraint(Kind.JSON_SCHEMA, schema, null, null);
    }

    /**
     * @return a constraint to any JSON object.
     */
    public static OutputConstraint jsonObject()
    {
        return new OutputConstraint(Kind.JSON_OBJECT, null, null, null);
    }

    /**
     * @param regex a regular expression (checked: it must compile and match something).
     * @return the constraint.
     * @throws IllegalArgumentException if it does not.
     */
    public static OutputConstraint regex(final String regex)
    {
        RegexSampler.sample(regex, new SeededRandom(0), 8); // reads it and draws once: a refusal names the problem
        return new OutputConstraint(Kind.REGEX, null, regex, null);
    }

    /**
     * @param choices the allowed texts, at least one.
     * @return the constraint.
     */
    public static OutputConstraint choice(final List<String> choices)
    {
        return new OutputConstraint(Kind.CHOICE, null, null, List.copyOf(choices));
    }

    /**
     * @param random the request's random source.
     * @return a text that satisfies the constraint.
     */
    public String sample(final SeededRandom random)
    {
        return switch (kind)
        {
            case JSON_OBJECT -> JsonSampler.sample(null, random);
            case JSON_SCHEMA -> JsonSampler.sample(schema, random);
            case REGEX -> RegexSampler.sample(regex, random, 64);
            case CHOICE -> choices.get(random.nextInt(choices.size()));
        };
    }

    /**
     * @return a one-line description for logs and errors.
     */
    @Override
    public String toString()
    {
        return switch (kind)
        {
            case JSON_OBJECT -> "json_object";
            case JSON_SCHEMA -> "json_schema";
            case REGEX -> "regex " + JsonBytes.quote(regex);
            case CHOICE -> "choice of " + choices.size();
        };
    }
}
