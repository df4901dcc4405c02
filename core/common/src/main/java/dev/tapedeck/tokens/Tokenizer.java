package dev.tapedeck.tokens;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Turns prompt text into token ids and knows the bytes of every token id. Prompt ids feed the scheduler, the prefix
 * cache and {@code usage.prompt_tokens}; token bytes turn generated ids back into text.
 * <p>
 * Implementations are immutable after construction and safe to call from any thread (several engines share one).
 */
public interface Tokenizer extends AutoCloseable
{
    /**
     * @return a short name for logs ({@code o200k_base}, {@code tokenizer.json path}).
     */
    String name();

    /**
     * Encode text in which special-token markers (such as {@code <|im_start|>}) are recognised as single tokens, as a
     * Hugging Face tokenizer does with its added tokens.
     *
     * @param text the text, usually a rendered chat template.
     * @return token ids.
     */
    int[] encode(String text);

    /**
     * @return the id to byte-string table of this tokenizer.
     */
    TokenVocabulary vocabulary();

    /**
     * @return the id of the token that ends an assistant turn (for chat models, the template's end-of-turn marker).
     */
    int eosTokenId();

    @Override
    default void close()
    {
    }

    /**
     * Open the tokenizer a {@code --tokenizer} flag names: the one way every product turns that setting into a
     * tokenizer, which the caller then owns and closes.
     *
     * @param tokenizerJson a Hugging Face {@code tokenizer.json}, or null for the built-in o200k_base BPE.
     * @return the tokenizer.
     * @throws IOException if the file cannot be read.
     */
    static Tokenizer open(final Path tokenizerJson) throws IOException
    {
        return null == tokenizerJson ? new BuiltinTokenizer() : new HfTokenizer(tokenizerJson);
    }
}
