package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.engine.FinishReason;
import dev.tapedeck.engine.Request;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Choice}, the frontend's text duties on their own: stop strings (found across token boundaries, the text cut
 * before them, the bytes that could start one held back) and UTF-8 (never half a character out). Here the engine
 * request is never run; the stop-token and min-tokens cases, which need one, are in {@link HttpStreamTest}.
 */
class ChoiceTest
{
    private static final String EURO = "\u20ac";
    private static final String EMOJI = "\ud83d\ude00";

    private static Choice choice(final boolean includeStopString, final String... stops)
    {
        return new Choice(null, 0, new Request("r", new int[] {1}), List.of(stops), includeStopString, true, null);
    }

    private static byte[] utf8(final String text)
    {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @return what a flush would send now, consumed as the stream does.
     */
    private static String emit(final Choice choice)
    {
        final int length = choice.emittableLength();
        final byte[] bytes = Arrays.copyOf(choice.pendingBytes(), length);
        choice.consume(length);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static String pending(final Choice choice)
    {
        return new String(choice.pendingBytes(), 0, choice.pendingLength(), StandardCharsets.UTF_8);
    }

    @Test
    void shouldEmitEveryTokenAtOnceWithoutStopStrings()
    {
        final Choice choice = choice(false);
        assertFalse(choice.appendToken(utf8("Hello")));
        assertEquals("Hello", emit(choice));
        assertFalse(choice.appendToken(utf8(" world")));
        assertEquals(" world", emit(choice));
        assertEquals("", emit(choice), "consumed bytes are not sent twice");
        choice.finish(FinishReason.LENGTH);
        assertEquals(FinishReason.LENGTH, choice.finishReason);
        assertFalse(choice.hasStopReason());
        assertEquals(0, choice.emittableLength());
    }

    @Test
    void shouldFindAStopStringSplitAcrossTokensAndCutTheTextBeforeIt()
    {
        final Choice choice = choice(false, "STOP");
        assertFalse(choice.appendToken(utf8("one S")));
        assertEquals("on", emit(choice), "the last 3 bytes (longest stop - 1) are held back");
        assertFalse(choice.appendToken(utf8("TO")));
        assertEquals("e ", emit(choice));
        assertEquals("STO", pending(choice));
        assertTrue(choice.appendToken(utf8("P and more")));
        assertEquals("STOP", choice.stopReasonText);
        assertTrue(choice.hasStopReason());
        choice.finish(FinishReason.STOP);
        assertEquals(0, choice.pendingLength(), "the stop string and everything after it is dropped");
    }

    @Test
    void shouldFindAStopStringInsideOneToken()
    {
        final Choice choice = choice(false, "\n\n");
        assertTrue(choice.appendToken(utf8("line one\n\nline two")));
        choice.finish(FinishReason.STOP);
        assertEquals("line one", emit(choice));
        assertEquals("\n\n", choice.stopReasonText);
    }

    @Test
    void shouldStopAtTheVeryStartWithEmptyText()
    {
        final Choice choice = choice(false, "Hi");
        assertTrue(choice.appendToken(utf8("Hi there")));
        assertEquals(0, choice.pendingLength());
        choice.finish(FinishReason.STOP);
        assertEquals("", emit(choice));
        assertEquals("Hi", choice.stopReasonText);
    }

    @Test
    void shouldStopAtTheEarliestOfSeveralStopStrings()
    {
        final Choice choice = choice(false, "world", "lo");
        assertTrue(choice.appendToken(utf8("hello world")));
        assertEquals("lo", choice.stopReasonText, "'lo' starts before 'world' even though it is listed second");
        choice.finish(FinishReason.STOP);
        assertEquals("hel", emit(choice));

        final Choice later = choice(false, "lo", "XYZ");
        assertFalse(later.appendToken(utf8("ab")));
        assertTrue(later.appendToken(utf8("cXYZ---lo")));
        assertEquals("XYZ", later.stopReasonText);
        later.finish(FinishReason.STOP);
        assertEquals("abc", emit(later));
    }

    @Test
    void shouldHoldBackTheLongestStopMinusOneBytes()
    {
        final Choice choice = choice(false, "ab", "abcdef");
        assertFalse(choice.appendToken(utf8("0123456789")));
        assertEquals("01234", emit(choice), "5 bytes held back for the 6-byte stop string");
        assertEquals("56789", pending(choice));
        assertFalse(choice.appendToken(utf8("xyz")));
        assertEquals("567", emit(choice));
    }

    @Test
    void shouldFindAStopStringWhoseStartWasHeldBackOverSeveralFlushes()
    {
        final Choice choice = choice(false, "world");
        assertFalse(choice.appendToken(utf8("hello w")));
        assertEquals("hel", emit(choice));
        assertFalse(choice.appendToken(utf8("o")));
        assertEquals("l", emit(choice));
        assertFalse(choice.appendToken(utf8("r")));
        assertEquals("o", emit(choice));
        assertTrue(choice.appendToken(utf8("ld!")));
        choice.finish(FinishReason.STOP);
        assertEquals(" ", emit(choice));
    }

    @Test
    void shouldKeepTheStopStringWhenAskedTo()
    {
        final Choice choice = choice(true, "END");
        assertFalse(choice.appendToken(utf8("the E")));
        assertEquals("the", emit(choice));
        assertTrue(choice.appendToken(utf8("ND, and then")));
        assertEquals("END", choice.stopReasonText);
        choice.finish(FinishReason.STOP);
        assertEquals(" END", emit(choice), "the stop string is kept, what follows it is not");
    }

    @Test
    void shouldSendTheHeldBackTailWhenTheChoiceEndsWithoutAStop()
    {
        final Choice choice = choice(false, "STOP");
        assertFalse(choice.appendToken(utf8("almost ST")));
        assertEquals("almost", emit(choice));
        choice.finish(FinishReason.LENGTH);
        assertNull(choice.stopReasonText);
        assertEquals(" ST", emit(choice));
    }

    @Test
    void shouldNotLookForStopStringsBeforeMinTokens()
    {
        final Choice choice = new Choice(null, 0, new Request("r", new int[] {1}).minTokens(1), List.of("STOP"),
            false, true, null);
        assertFalse(choice.appendToken(utf8("STOP")), "no output token counted yet, fewer than min_tokens");
        assertNull(choice.stopReasonText);
        choice.finish(FinishReason.LENGTH);
        assertEquals("STOP", emit(choice));
    }

    @Test
    void shouldHoldAMultiByteCharacterUntilItsLastByteArrives()
    {
        final byte[] euro = utf8(EURO);
        assertEquals(3, euro.length);
        final Choice choice = choice(false);
        assertFalse(choice.appendToken(new byte[] {'a', euro[0]}));
        assertEquals("a", emit(choice));
        assertFalse(choice.appendToken(new byte[] {euro[1]}));
        assertEquals(0, choice.emittableLength(), "two of three bytes are not a character yet");
        assertFalse(choice.appendToken(new byte[] {euro[2], 'b'}));
        assertEquals(EURO + "b", emit(choice));
    }

    @Test
    void shouldHoldAFourByteCharacterSplitIntoSingleBytes()
    {
        final byte[] emoji = utf8(EMOJI);
        assertEquals(4, emoji.length);
        final Choice choice = choice(false);
        for (int i = 0; i < 3; i++)
        {
            choice.appendToken(new byte[] {emoji[i]});
            assertEquals(0, choice.emittableLength(), "after byte " + (i + 1) + " of 4");
        }
        choice.appendToken(new byte[] {emoji[3]});
        assertEquals(EMOJI, emit(choice));
    }

    @Test
    void shouldNotCutACharacterWhereTheStopHoldBackEnds()
    {
        final Choice choice = choice(false, "xyz");
        assertFalse(choice.appendToken(utf8("ab" + EURO)));
        assertEquals("ab", emit(choice), "the hold-back ends inside the euro sign: all of it waits");
        assertFalse(choice.appendToken(utf8("cd")));
        assertEquals(EURO, emit(choice));
    }

    @Test
    void shouldFindAMultiByteStopStringSplitInsideACharacter()
    {
        final byte[] euro = utf8(EURO);
        final Choice choice = choice(false, EURO + "!");
        assertFalse(choice.appendToken(new byte[] {'5', ' ', euro[0], euro[1]}));
        assertEquals("5", emit(choice));
        assertTrue(choice.appendToken(new byte[] {euro[2], '!', '?'}));
        assertEquals(EURO + "!", choice.stopReasonText);
        choice.finish(FinishReason.STOP);
        assertEquals(" ", emit(choice));
    }

    @Test
    void shouldEndAnAnswerCutInsideACharacterWithTheReplacementCharacter()
    {
        final byte[] euro = utf8(EURO);
        final Choice choice = choice(false);
        choice.appendToken(new byte[] {'a', euro[0], euro[1]});
        assertEquals("a", emit(choice));
        choice.finish(FinishReason.LENGTH);
        assertEquals("\ufffd", emit(choice), "as the detokenizer shows an incomplete character");
    }

    @Test
    void shouldIgnoreASecondFinish()
    {
        final Choice choice = choice(false);
        choice.appendToken(utf8("x"));
        choice.finish(FinishReason.LENGTH);
        choice.finish(FinishReason.ABORT);
        assertEquals(FinishReason.LENGTH, choice.finishReason);
        assertEquals("x", emit(choice));
    }

    @Test
    void shouldFindUtf8BoundariesOfEverySequenceLength()
    {
        final byte[] text = utf8("a\u00e9" + EURO + EMOJI);
        assertEquals(10, text.length);
        final int[] expected = {0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10};
        for (int limit = 0; limit <= text.length; limit++)
        {
            assertEquals(expected[limit], Choice.utf8Boundary(text, limit), "limit " + limit);
        }
    }
}
