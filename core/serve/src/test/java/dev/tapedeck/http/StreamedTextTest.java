package dev.tapedeck.http;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.channel.embedded.EmbeddedChannel;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.testing.NoNettyLeaks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The text of streamed answers end to end (engine, {@link HttpFront}, {@link Choice}, {@link HttpStream}), with one
 * token per byte ({@link ByteTokenizer}) so every multi-byte character is split across tokens: no event ever carries
 * half a character or a byte of a stop string that is later taken back; stop strings, stop token ids and min_tokens
 * end the engine request where vLLM's would.
 */
@ExtendWith(NoNettyLeaks.class)
class StreamedTextTest
{
    /** What one streamed completion put on the wire. */
    private record Streamed(List<String> texts, JsonNode last, JsonNode usage)
    {
        String text()
        {
            return String.join("", texts);
        }
    }

    /**
     * Stream a completion of the given echo prompt to its end.
     *
     * @param prompt the prompt, echoed back one byte-token per step.
     * @param extra more request fields, each starting with a comma.
     */
    private static Streamed complete(final String prompt, final String extra)
    {
        return complete(ByteTokenizer.bytes(prompt), extra);
    }

    private static Streamed complete(final int[] prompt, final String extra)
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, EmbeddedServe.post("/v1/completions", "{\"prompt\":" + Arrays.toString(prompt) +
                ",\"stream\":true,\"stream_options\":{\"include_usage\":true}" + extra + "}"));
            serve.runUntilIdle();
            final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
            assertEquals(1, responses.size());
            final HttpWire.Response response = responses.get(0);
            assertTrue(response.complete());
            final List<String> texts = new ArrayList<>();
            JsonNode last = null;
            JsonNode usage = null;
            for (final byte[] chunk : response.chunks())
            {
                for (final String data : StreamWire.events(chunk))
                {
                    if (StreamWire.DONE.equals(data))
                    {
                        continue;
                    }
                    final JsonNode event = StreamWire.json(data);
                    if (event.get("choices").isEmpty())
                    {
                        usage = event.get("usage");
                        continue;
                    }
                    texts.add(StreamWire.text(data));
                    last = event.at("/choices/0");
                }
            }
            assertEquals(0, serve.engine0().numRunning() + serve.engine0().numWaiting());
            return new Streamed(texts, last, usage);
        }
    }

    @Test
    void shouldSendEachMultiByteCharacterWholeInTheEventOfItsLastByte()
    {
        final Streamed streamed = complete("\u00e9\u20ac\ud83d\ude00 ok", "");
        final List<String> nonEmpty = new ArrayList<>(streamed.texts());
        nonEmpty.removeIf(String::isEmpty);
        assertEquals(List.of("\u00e9", "\u20ac", "\ud83d\ude00", " ", "o", "k"), nonEmpty,
            "2 + 3 + 4 byte-tokens, yet every event holds whole characters");
        assertEquals(12, streamed.usage().get("completion_tokens").asInt());
        assertEquals("stop", streamed.last().get("finish_reason").asText());
    }

    @Test
    void shouldStopAtAStopStringSplitAcrossTokensWithoutEverSendingPartOfIt()
    {
        final Streamed streamed = complete("say STOP now and more", ",\"stop\":[\"STOP\"]");
        assertEquals("say ", streamed.text());
        for (final String text : streamed.texts())
        {
            assertFalse(text.contains("S"), "a byte of the stop string went out: " + streamed.texts());
        }
        assertEquals("stop", streamed.last().get("finish_reason").asText());
        assertEquals("STOP", streamed.last().get("stop_reason").asText());
        assertEquals(8, streamed.usage().get("completion_tokens").asInt(), "the engine request ended at the 'P'");
    }

    @Test
    void shouldStopAtTheEarliestOfSeveralStopStringsAndKeepItWhenAsked()
    {
        final Streamed streamed = complete("one, two. three", ",\"stop\":[\".\",\",\"]");
        assertEquals("one", streamed.text());
        assertEquals(",", streamed.last().get("stop_reason").asText());
        final Streamed kept = complete("one, two. three", ",\"stop\":[\"two\",\"three\"]," +
            "\"include_stop_str_in_output\":true");
        assertEquals("one, two", kept.text());
        assertEquals("two", kept.last().get("stop_reason").asText());
    }

    @Test
    void shouldStopWhenTheAnswerStartsWithTheStopString()
    {
        final Streamed streamed = complete("STOP at once", ",\"stop\":\"STOP\"");
        assertEquals("", streamed.text());
        assertEquals("stop", streamed.last().get("finish_reason").asText());
        assertEquals(4, streamed.usage().get("completion_tokens").asInt());
    }

    @Test
    void shouldIgnoreStopStringsCompletedBeforeMinTokens()
    {
        final Streamed streamed = complete("STOP, then STOP again", ",\"stop\":[\"STOP\"],\"min_tokens\":5");
        assertEquals("STOP, then ", streamed.text());
        assertEquals("STOP", streamed.last().get("stop_reason").asText());
        assertEquals(15, streamed.usage().get("completion_tokens").asInt());
    }

    @Test
    void shouldEndAtAStopTokenIdAndDropItsTextUnlessAsked()
    {
        final Streamed streamed = complete("abcdef", ",\"stop_token_ids\":[99]");
        assertEquals("ab", streamed.text());
        assertEquals("stop", streamed.last().get("finish_reason").asText());
        assertEquals(99, streamed.last().get("stop_reason").asInt(), "stop_reason is the token id, a number");
        assertEquals(3, streamed.usage().get("completion_tokens").asInt());
        final Streamed kept = complete("abcdef", ",\"stop_token_ids\":[99],\"include_stop_str_in_output\":true");
        assertEquals("abc", kept.text());
    }

    @Test
    void shouldNotLeaveHalfACharacterBehindWhenAStopTokenEndsTheAnswer()
    {
        final int[] euro = ByteTokenizer.bytes("\u20ac");
        final Streamed streamed = complete(new int[] {'a', euro[0], euro[1], 'X', 'b'}, ",\"stop_token_ids\":[88]");
        assertEquals("a\ufffd", streamed.text(), "the incomplete euro sign before the stop token is U+FFFD");
        assertEquals(88, streamed.last().get("stop_reason").asInt());
    }

    @Test
    void shouldEndAnAnswerCutInsideACharacterWithTheReplacementCharacter()
    {
        final Streamed streamed = complete("ab\u20ac", ",\"max_tokens\":4");
        assertEquals("ab\ufffd", streamed.text());
        assertEquals("length", streamed.last().get("finish_reason").asText());
    }
}
