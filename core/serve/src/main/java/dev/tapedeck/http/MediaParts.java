package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.kv.MediaSpans;
import dev.tapedeck.tokens.Tokenizer;

/**
 * The images, audio clips and videos of a chat request, as a vision or audio model's processor sees them: each stands
 * for a run of identical placeholder tokens (the tokenizer's {@code <|image_pad|>} or its like) of a fixed length per
 * modality, and is known by an identifier, the SHA-256 of the part as sent (its URL or data). vLLM's identifier hashes
 * the decoded media instead, which a simulator without the pixels cannot; both give the same media the same
 * identifier. The identifiers go into the block hashes and the KV events' {@code extra_keys} through
 * {@link MediaSpans}, so two prompts with the same placeholders share blocks only when their media agree.
 * <p>
 * While the messages are parsed, each part leaves a marker in its message's text ({@link #add}), made with a random
 * value per request so that no client text can pose as one; the rendered chat template is then cut at the markers
 * and the runs put in their place ({@link #tokenize}). A template that drops a message drops its media too. The
 * media's placeholder tokens are checked against the context before any run is built. Built and read by one thread
 * at a time.
 */
final class MediaParts
{
    /** Content-part types that carry media, and their modality. */
    private static final Map<String, String> MODALITY = Map.of("image_url", "image", "input_image", "image",
        "input_audio", "audio", "audio_url", "audio", "video_url", "video");
    /** Placeholder tokens per item: an image of about 448 x 448 pixels for a Qwen2.5-VL-like model, and so on. */
    private static final Map<String, Integer> TOKENS = Map.of("image", 256, "audio", 188, "video", 1024);
    /** The placeholder token's spelling in common tokenizers, tried in order. */
    private static final Map<String, String[]> PAD_TOKENS = Map.of(
        "image", new String[] {"<|image_pad|>", "<image>", "<|image|>", "<IMG_CONTEXT>", "<image_soft_token>"},
        "audio", new String[] {"<|audio_pad|>", "<|AUDIO|>", "<audio>", "<|audio|>", "<audio_soft_token>"},
        "video", new String[] {"<|video_pad|>", "<video>", "<|video|>"});
    /** The field that holds each part type's media (Responses' {@code input_image} holds an {@code image_url}). */
    private static final Map<String, String> MEDIA_FIELD = Map.of("image_url", "image_url", "input_image",
        "image_url", "input_audio", "input_audio", "audio_url", "audio_url", "video_url", "video_url");
    /** Unicode noncharacters around a marker: kept by any template, never meant as text. */
    private static final char OPEN = '\uFDD0';
    private static final char CLOSE = '\uFDD1';

    private final List<String> modalities = new ArrayList<>(1);
    private final List<String> identifiers = new ArrayList<>(1);
    /** A marker is {@code OPEN nonce index CLOSE}: a client cannot write one of this request's markers in its text. */
    private String nonce;

    /**
     * @param type a content part's {@code type}.
     * @return whether it carries media.
     */
    static boolean isMedia(final String type)
    {
        return MODALITY.containsKey(type);
    }

    /**
     * @return the content-part types that carry media, for error messages.
     */
    static String types()
    {
        return String.join(", ", new java.util.TreeSet<>(MODALITY.keySet()));
    }

    /**
     * Take a media part.
     *
     * @param type its {@code type} ({@link #isMedia}).
     * @param part the whole part as sent.
     * @return the marker that stands for it in its message's text.
     */
    String add(final String type, final JsonNode part, final String path)
    {
        final String modality = MODALITY.get(type);
        final JsonNode media = part.get(MEDIA_FIELD.get(type));
        final JsonNode fileId = part.get("file_id");
        if ((null == media || media.isNull()) && (null == fileId || !fileId.isTextual()))
        {
            throw ApiException.badRequest("a content part of type '" + type + "' needs its '" + MEDIA_FIELD.get(type) +
                "'", path);
        }
        if (null == nonce)
        {
            nonce = Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
        }
        final MessageDigest sha256;
        try
        {
            sha256 = MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
        sha256.update(modality.getBytes(StandardCharsets.UTF_8));
        sha256.update((byte)0);
        sha256.update((null == media || media.isNull() ? fileId : media).toString().getBytes(StandardCharsets.UTF_8));
        identifiers.add(HexFormat.of().formatHex(sha256.digest()));
        modalities.add(modality);
        return OPEN + nonce + ':' + (identifiers.size() - 1) + CLOSE;
    }

    /**
     * @param text a message's text.
     * @return the text without this request's markers (what the client wrote around its media).
     */
    String withoutMarkers(final String text)
    {
        if (null == nonce || text.indexOf(OPEN) < 0)
        {
            return text;
        }
        final StringBuilder out = new StringBuilder(text.length());
        int from = 0;
        while (true)
        {
            final int open = text.indexOf(OPEN, from);
            final int close = open < 0 ? -1 : text.indexOf(CLOSE, open);
            if (close < 0 || itemOf(text, open + 1, close) < 0)
            {
                out.append(text, from, open < 0 ? text.length() : open + 1);
                if (open < 0)
                {
                    return out.toString();
                }
                from = open + 1;
                continue;
            }
            out.append(text, from, open);
            from = close + 1;
        }
    }

    /**
     * @return whether the request has no media.
     */
    boolean isEmpty()
    {
        return identifiers.isEmpty();
    }

    /**
     * A prompt's token ids with each media item's placeholder run where its marker is, and where the runs are.
     *
     * @param ids the prompt's token ids.
     * @param spans where its media sit, or null when the template kept none.
     */
    record Tokenized(int[] ids, MediaSpans spans)
    {
    }

    /**
     * Tokenize a rendered prompt: the text between markers as the tokenizer encodes it, each marker as its item's
     * run of placeholder tokens.
     *
     * @param rendered the chat template's output.
     * @param tokenizer the served tokenizer.
     * @param maxModelLen the context length: a request whose media alone need more is refused before their runs are
     *     built.
     * @return the ids and the runs.
     * @throws ApiException (400) when the media alone exceed the context.
     */
    Tokenized tokenize(final String rendered, final Tokenizer tokenizer, final int maxModelLen)
    {
        long mediaTokens = 0;
        for (final String modality : modalities)
        {
            mediaTokens += TOKENS.get(modality);
        }
        if (mediaTokens > maxModelLen)
        {
            throw ApiException.badRequest("This model's maximum context length is " + maxModelLen + " tokens. " +
                "However, your request's " + modalities.size() + " media items alone take " + mediaTokens +
                " placeholder tokens. Please send fewer images, audio clips or videos.", "messages");
        }
        final Map<String, Integer> padIds = new java.util.HashMap<>(4);
        final List<int[]> pieces = new ArrayList<>();
        final List<String> spanIds = new ArrayList<>();
        final List<int[]> spanAt = new ArrayList<>();
        final boolean[] used = new boolean[identifiers.size()];
        int total = 0;
        int textFrom = 0;
        int scan = 0;
        while (true)
        {
            final int open = rendered.indexOf(OPEN, scan);
            final int close = open < 0 ? -1 : rendered.indexOf(CLOSE, open);
            if (close < 0)
            {
                break;
            }
            final int item = itemOf(rendered, open + 1, close);
            scan = open + 1;
            if (item < 0)
            {
                continue; // not one of ours: text
            }
            total += add(pieces, tokenizer, rendered.substring(textFrom, open));
            textFrom = close + 1;
            scan = textFrom;
            if (used[item])
            {
                continue; // a template that renders a message twice: the media once, where it first appears
            }
            used[item] = true;
            final String modality = modalities.get(item);
            final int length = TOKENS.get(modality);
            final int[] run = new int[length];
            java.util.Arrays.fill(run, padIds.computeIfAbsent(modality, m -> padToken(tokenizer, m)));
            pieces.add(run);
            spanIds.add(identifiers.get(item));
            spanAt.add(new int[] {total, length});
            total += length;
        }
        total += add(pieces, tokenizer, rendered.substring(textFrom));
        final int[] ids = new int[total];
        int at = 0;
        for (final int[] piece : pieces)
        {
            System.arraycopy(piece, 0, ids, at, piece.length);
            at += piece.length;
        }
        if (spanIds.isEmpty())
        {
            return new Tokenized(ids, null);
        }
        final int[] offsets = new int[spanIds.size()];
        final int[] lengths = new int[spanIds.size()];
        for (int i = 0; i < offsets.length; i++)
        {
            offsets[i] = spanAt.get(i)[0];
            lengths[i] = spanAt.get(i)[1];
        }
        return new Tokenized(ids, new MediaSpans(spanIds.toArray(new String[0]), offsets, lengths));
    }

    /** The item a marker's inside {@code nonce:index} names, or -1 when it is not this request's marker. */
    private int itemOf(final String rendered, final int from, final int to)
    {
        if (null == nonce || !rendered.startsWith(nonce, from) || from + nonce.length() >= to ||
            ':' != rendered.charAt(from + nonce.length()) || to - from - nonce.length() - 1 > 6)
        {
            return -1;
        }
        int item = 0;
        for (int i = from + nonce.length() + 1; i < to; i++)
        {
            final char c = rendered.charAt(i);
            if (c < '0' || c > '9')
            {
                return -1;
            }
            item = item * 10 + (c - '0');
        }
        return item < identifiers.size() ? item : -1;
    }

    private static int add(final List<int[]> pieces, final Tokenizer tokenizer, final String text)
    {
        if (text.isEmpty())
        {
            return 0;
        }
        final int[] ids = tokenizer.encode(text);
        pieces.add(ids);
        return ids.length;
    }

    /**
     * The tokenizer's placeholder token for a modality: the first of {@link #PAD_TOKENS} it encodes as one token (an
     * added token), else the first token of the modality's name.
     */
    static int padToken(final Tokenizer tokenizer, final String modality)
    {
        for (final String spelling : PAD_TOKENS.get(modality))
        {
            final int[] ids = tokenizer.encode(spelling);
            if (1 == ids.length)
            {
                return ids[0];
            }
        }
        return tokenizer.encode(modality)[0];
    }
}
