package dev.tapedeck.tokens;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;

/**
 * A Hugging Face {@code tokenizer.json} ({@code --tokenizer FILE}), through DJL's binding of the Rust
 * {@code tokenizers} library (its jar carries the native library), so prompt token counts match the served model's.
 * Special tokens in the text (the chat template's markers) are recognised as the model's added tokens.
 * <p>
 * Token bytes come from the file's vocabulary (see {@code HfTokenizerJson}). Thread safe: the native tokenizer is
 * safe for concurrent encodes; close it once at shutdown.
 */
public final class HfTokenizer implements Tokenizer
{
    private static final String[] EOS_CANDIDATES = {
        "<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "</s>", "<|endoftext|>", "<eos>",
    };

    private final Path file;
    private final HuggingFaceTokenizer tokenizer;
    private final TokenVocabulary vocabulary;
    private final int eosTokenId;

    /**
     * @param file path of a {@code tokenizer.json}.
     * @throws IOException when the file cannot be read or is not a tokenizer.
     */
    public HfTokenizer(final Path file) throws IOException
    {
        if (!Files.isRegularFile(file))
        {
            throw new IOException("tokenizer file not found: " + file);
        }
        this.file = file;
        final HfTokenizerJson json = HfTokenizerJson.read(file);
        vocabulary = new TokenVocabulary(json.bytesById());
        final int eos = json.idOf(EOS_CANDIDATES);
        eosTokenId = eos >= 0 ? eos : vocabulary.randomTokenIds()[0];
        try
        {
            tokenizer = HuggingFaceTokenizer.newInstance(file,
                Map.of("addSpecialTokens", "false", "truncation", "false", "padding", "false"));
        }
        catch (final RuntimeException | UnsatisfiedLinkError ex)
        {
            throw new IOException("cannot load " + file + " with the Hugging Face tokenizers library: " + ex, ex);
        }
    }

    @Override
    public String name()
    {
        return "tokenizer.json " + file;
    }

    @Override
    public int[] encode(final String text)
    {
        final Encoding encoding = tokenizer.encode(text, false, false);
        final long[] ids = encoding.getIds();
        final int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++)
        {
            out[i] = (int)ids[i];
        }
        return out;
    }

    @Override
    public TokenVocabulary vocabulary()
    {
        return vocabulary;
    }

    @Override
    public int eosTokenId()
    {
        return eosTokenId;
    }

    @Override
    public void close()
    {
        tokenizer.close();
    }
}
