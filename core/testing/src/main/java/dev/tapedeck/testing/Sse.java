package dev.tapedeck.testing;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Parses a Server-Sent-Events body the way OpenAI clients do: {@code data: <json>} events separated by blank lines,
 * ending with {@code data: [DONE]}. Strict: anything else is an error.
 */
public final class Sse
{
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** The events of one stream. */
    public record Stream(List<JsonNode> events, boolean done)
    {
        /**
         * @param index choice index.
         * @return the concatenated delta text (chat) or text (completions) of that choice.
         */
        public String text(final int index)
        {
            final StringBuilder out = new StringBuilder();
            for (final JsonNode event : events)
            {
                for (final JsonNode choice : event.path("choices"))
                {
                    if (choice.path("index").asInt() == index)
                    {
                        out.append(choice.has("delta") ? choice.path("delta").path("content").asText("") :
                            choice.path("text").asText(""));
                    }
                }
            }
            return out.toString();
        }

        /**
         * @param index choice index.
         * @return the finish reason of that choice, or null.
         */
        public String finishReason(final int index)
        {
            for (final JsonNode event : events)
            {
                for (final JsonNode choice : event.path("choices"))
                {
                    if (choice.path("index").asInt() == index && !choice.path("finish_reason").isNull() &&
                        choice.has("finish_reason"))
                    {
                        return choice.path("finish_reason").asText();
                    }
                }
            }
            return null;
        }

        /**
         * @return the usage object of the final usage event, or null.
         */
        public JsonNode usage()
        {
            for (final JsonNode event : events)
            {
                if (event.has("usage") && event.path("choices").isEmpty() && !event.path("usage").isNull())
                {
                    return event.get("usage");
                }
            }
            return null;
        }

        /**
         * @param index choice index.
         * @return number of events that carry content for that choice (role chunk excluded).
         */
        public int contentEvents(final int index)
        {
            int count = 0;
            for (final JsonNode event : events)
            {
                for (final JsonNode choice : event.path("choices"))
                {
                    if (choice.path("index").asInt() == index && !choice.path("delta").has("role"))
                    {
                        count++;
                    }
                }
            }
            return count;
        }
    }

    private Sse()
    {
    }

    /**
     * @param body the whole SSE body.
     * @return its events.
     */
    public static Stream parse(final String body)
    {
        final List<JsonNode> events = new ArrayList<>();
        boolean done = false;
        final String[] blocks = body.split("\n\n", -1);
        for (int i = 0; i < blocks.length; i++)
        {
            final String block = blocks[i];
            if (block.isEmpty())
            {
                if (i != blocks.length - 1)
                {
                    throw new AssertionError("empty SSE event at " + i);
                }
                continue;
            }
            if (done)
            {
                throw new AssertionError("event after [DONE]: " + block);
            }
            if (!block.startsWith("data: ") || block.indexOf('\n') >= 0)
            {
                throw new AssertionError("not a single data line: " + block);
            }
            final String data = block.substring("data: ".length());
            if ("[DONE]".equals(data))
            {
                done = true;
                continue;
            }
            try
            {
                events.add(MAPPER.readTree(data));
            }
            catch (final Exception ex)
            {
                throw new AssertionError("invalid JSON in SSE event: " + data, ex);
            }
        }
        if (!body.endsWith("\n\n"))
        {
            throw new AssertionError("SSE body does not end with a blank line");
        }
        return new Stream(events, done);
    }
}
