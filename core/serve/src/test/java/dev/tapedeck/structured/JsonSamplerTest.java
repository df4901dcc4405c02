package dev.tapedeck.structured;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.SeededRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every sample of {@link JsonSampler} validates against its schema, as an independent JSON Schema validator
 * (networknt, draft 2020-12) judges it, over many seeds; samples vary with the seed and repeat with it.
 */
class JsonSamplerTest
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SchemaRegistry REGISTRY =
        SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

    @ParameterizedTest
    @ValueSource(strings = {
        // a tool's parameters, as OpenAI's function-calling guide writes them
        "{\"type\":\"object\",\"properties\":{\"location\":{\"type\":\"string\",\"description\":\"City\"}," +
            "\"unit\":{\"type\":\"string\",\"enum\":[\"celsius\",\"fahrenheit\"]}},\"required\":[\"location\"]," +
            "\"additionalProperties\":false}",
        // bounds, multiples, nullable types, arrays with sizes, nested objects
        "{\"type\":\"object\",\"properties\":{\"count\":{\"type\":\"integer\",\"minimum\":3,\"maximum\":9," +
            "\"multipleOf\":3},\"ratio\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"exclusiveMaximum\":1}," +
            "\"note\":{\"type\":[\"string\",\"null\"],\"minLength\":5,\"maxLength\":12}," +
            "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":2,\"maxItems\":4}," +
            "\"owner\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\",\"format\":\"uuid\"}," +
            "\"email\":{\"type\":\"string\",\"format\":\"email\"},\"since\":{\"type\":\"string\"," +
            "\"format\":\"date-time\"}},\"required\":[\"id\",\"email\",\"since\"]},\"ok\":{\"type\":\"boolean\"}}," +
            "\"required\":[\"count\",\"ratio\",\"note\",\"tags\",\"owner\",\"ok\"]}",
        // $defs, $ref, anyOf, const, pattern, recursion
        "{\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"," +
            "\"pattern\":\"^[a-z]{3}-\\\\d{2}$\"},\"children\":{\"type\":\"array\",\"items\":{\"$ref\":" +
            "\"#/$defs/node\"}}},\"required\":[\"name\"]}},\"type\":\"object\",\"properties\":{\"root\":{\"$ref\":" +
            "\"#/$defs/node\"},\"kind\":{\"const\":\"tree\"},\"size\":{\"anyOf\":[{\"type\":\"integer\"," +
            "\"minimum\":0},{\"type\":\"string\",\"enum\":[\"unknown\"]}]}},\"required\":[\"root\",\"kind\",\"size\"]}",
        // allOf merging, tuples, a top-level array
        "{\"type\":\"array\",\"prefixItems\":[{\"type\":\"integer\"},{\"type\":\"string\"}],\"items\":false," +
            "\"minItems\":2}",
        "{\"allOf\":[{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},\"required\":[\"a\"]}," +
            "{\"properties\":{\"b\":{\"type\":\"string\",\"format\":\"date\"}},\"required\":[\"b\"]}]}",
    })
    void shouldSampleDocumentsThatValidate(final String schemaText) throws Exception
    {
        final JsonNode schemaNode = JSON.readTree(schemaText);
        final Schema schema = REGISTRY.getSchema(schemaText, InputFormat.JSON);
        final Set<String> distinct = new HashSet<>();
        for (int seed = 0; seed < 300; seed++)
        {
            final String sample = JsonSampler.sample(schemaNode, new SeededRandom(seed));
            final List<Error> errors = schema.validate(sample, InputFormat.JSON);
            assertTrue(errors.isEmpty(), "seed " + seed + ": " + sample + " -> " + errors);
            distinct.add(sample);
        }
        assertTrue(distinct.size() > 20, "samples vary with the seed: " + distinct.size());
        assertEquals(JsonSampler.sample(schemaNode, new SeededRandom(7)),
            JsonSampler.sample(schemaNode, new SeededRandom(7)), "and repeat with it");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        // required self-reference, an expression tree whose every branch recurses, allOf of itself, recursive items
        "{\"type\":\"object\",\"properties\":{\"c\":{\"$ref\":\"#\"}},\"required\":[\"c\"]}",
        "{\"$defs\":{\"e\":{\"anyOf\":[{\"type\":\"object\",\"properties\":{\"l\":{\"$ref\":\"#/$defs/e\"}," +
            "\"r\":{\"$ref\":\"#/$defs/e\"}},\"required\":[\"l\",\"r\"]}]}},\"$ref\":\"#/$defs/e\"}",
        "{\"allOf\":[{\"$ref\":\"#\"}]}",
        "{\"type\":\"array\",\"minItems\":2,\"items\":{\"$ref\":\"#\"}}",
        // sizes beyond any answer
        "{\"type\":\"array\",\"minItems\":2000000000,\"maxItems\":2000000000,\"items\":{\"type\":\"integer\"}}",
        "{\"type\":\"string\",\"minLength\":2000000000}",
        "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"number\",\"minimum\":-1e308,\"maximum\":1e308}," +
            "\"i\":{\"type\":\"integer\",\"minimum\":-9e18,\"maximum\":9e18},\"a\":{\"$ref\":\"#anchor\"}}," +
            "\"required\":[\"n\",\"i\",\"a\"]}",
    })
    void shouldEndAndStayBoundedOnSchemasWithoutAFiniteSmallInstance(final String schemaText) throws Exception
    {
        final String sample = JsonSampler.sample(JSON.readTree(schemaText), new SeededRandom(5));
        assertTrue(sample.length() < 200_000, "bounded: " + sample.length());
        assertTrue(null != JSON.readTree(sample), "and JSON: " + sample.substring(0, Math.min(200, sample.length())));
    }

    @Test
    void shouldWriteAnObjectForAnEmptySchemaAsModelsWriteJson() throws Exception
    {
        final String sample = JsonSampler.sample(null, new SeededRandom(3));
        assertTrue(JSON.readTree(sample).isObject(), sample);
        assertTrue(sample.contains("\": "), "key-value separator as models write it: " + sample);
    }
}
