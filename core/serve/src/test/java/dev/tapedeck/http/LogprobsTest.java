package dev.tapedeck.http;

import java.util.HashSet;
import java.util.Set;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import dev.tapedeck.tokens.TokenVocabulary;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The synthetic distributions at any depth: log-probabilities finite and strictly falling however deep the rank
 * (a request may ask for the whole vocabulary), alternatives distinct and never the emitted token, and numbers
 * written as JSON numbers.
 */
class LogprobsTest
{
    @Test
    void shouldStayFiniteSortedAndDistinctAtAnyDepth()
    {
        final TokenVocabulary vocabulary = TestServer.tokenizer().vocabulary();
        final int emitted = vocabulary.randomTokenIds()[17];
        long previous = 0;
        for (final int rank : new int[] {1, 2, 3, 100, 1070, 5000, 100_000})
        {
            final long micros = Logprobs.logprobMicros(emitted, 3, rank);
            assertTrue(micros < previous && micros > Long.MIN_VALUE / 2, "rank " + rank + ": " + micros);
            previous = micros;
        }
        final Set<Integer> seen = new HashSet<>();
        for (int rank = 2; rank <= 2000; rank++)
        {
            final int alternative = Logprobs.alternative(vocabulary, emitted, 3, rank);
            assertNotEquals(emitted, alternative);
            assertTrue(seen.add(alternative), "rank " + rank + " repeats a token");
        }
        final ByteBuf out = Unpooled.buffer();
        Logprobs.writeMicros(out, Logprobs.logprobMicros(emitted, 3, 100_000));
        final String text = out.toString(java.nio.charset.StandardCharsets.US_ASCII);
        assertTrue(text.matches("-\\d+\\.\\d{6}"), text);
        out.release();
        assertEquals(-1, Long.signum(Logprobs.logprobMicros(emitted, 3, 1)));
    }
}
