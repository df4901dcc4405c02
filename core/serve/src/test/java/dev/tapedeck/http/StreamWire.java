package dev.tapedeck.http;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Checks on what a streaming response put on the wire: one HTTP chunk is parsed into its SSE events, strictly (every
 * event a single {@code data:} line ending in a blank line, valid UTF-8, valid JSON).
 */
final class StreamWire
{
    static final ObjectMapper JSON = new ObjectMapper();
    static final String DONE = "[DONE]";

    private StreamWire()
    {
    }

    /**
     * @param bytes bytes that must be valid UTF-8.
     * @return the text.
     */
    static String utf8(final byte[] bytes)
    {
        try
        {
            return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes)).toString();
        }
        catch (final CharacterCodingException ex)
        {
            throw new AssertionError("not valid UTF-8: " + new String(bytes, StandardCharsets.ISO_8859_1), ex);
        }
    }

    /**
     * @param payload the payload of one HTTP chunk (or a whole SSE body).
     * @return the data of each event, in order ({@link #DONE} for the end marker).
     */
    static List<String> events(final byte[] payload)
    {
        final String text = utf8(payload);
        if (!text.endsWith("\n\n"))
        {
            throw new AssertionError("the chunk does not end with a whole event: " + text);
        }
        final List<String> events = new ArrayList<>();
        for (final String event : text.substring(0, text.length() - 2).split("\n\n", -1))
        {
            if (!event.startsWith("data: ") || event.indexOf('\n') >= 0)
            {
                throw new AssertionError("not a single data line: '" + event + "' in " + text);
            }
            events.add(event.substring("data: ".length()));
        }
        return events;
    }

    /**
     * @param data one event's data (not {@link #DONE}).
     * @return its JSON.
     */
    static JsonNode json(final String data)
    {
        try
        {
            return JSON.readTree(data);
        }
        catch (final Exception ex)
        {
            throw new AssertionError("not JSON: " + data, ex);
        }
    }

    /**
     * @param data one event's data.
     * @return the text its first choice carries (chat delta content or completion text), "" for none.
     */
    static String text(final String data)
    {
        final JsonNode choice = json(data).path("choices").path(0);
        return choice.has("delta") ? choice.path("delta").path("content").asText("") : choice.path("text").asText("");
    }

    /**
     * @param metrics a Prometheus exposition.
     * @param sample a sample's name with its labels, as printed.
     * @return its value.
     */
    static double metric(final String metrics, final String sample)
    {
        for (final String line : metrics.split("\n"))
        {
            if (line.startsWith(sample + " "))
            {
                return Double.parseDouble(line.substring(sample.length() + 1));
            }
        }
        throw new AssertionError("no sample " + sample);
    }
}
