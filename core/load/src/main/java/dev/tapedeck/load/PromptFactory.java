package dev.tapedeck.load;

import dev.tapedeck.latency.SeededRandom;

/**
 * Builds a planned request's prompt with exactly its token count, and with the prefix structure its hash ids imply:
 * every block id stands for the same {@code blockSize} words wherever it appears (so two prompts that share their
 * first k ids share their first k x blockSize tokens, and a prefix-caching server sees the hits the trace implies);
 * tokens beyond the ids, and whole prompts without ids, are words unique to the request. With
 * {@code cacheResistant}, every prompt starts with two words unique to its request instead, so no two prompts share
 * a prefix.
 * <p>
 * Deterministic for a seed. Not thread safe (one scratch random); use one per thread.
 */
public final class PromptFactory
{
    private final PromptWords words;
    private final long seed;
    private final int blockSize;
    private final boolean cacheResistant;
    private final SeededRandom random = new SeededRandom(0);

    /**
     * @param words single-token words of the server's tokenizer.
     * @param seed the run's seed.
     * @param blockSize tokens per hash id (0 when the plan has none).
     * @param cacheResistant true to give every prompt a unique start.
     */
    public PromptFactory(final PromptWords words, final long seed, final int blockSize, final boolean cacheResistant)
    {
        this.words = words;
        this.seed = seed;
        this.blockSize = blockSize;
        this.cacheResistant = cacheResistant;
    }

    /**
     * @return tokens per hash id: without cache resistance, hash id {@code h} at place {@code b} of the ids always
     *     gives tokens {@code [b x blockSize, (b + 1) x blockSize)} the same words (when the prompt is that long).
     */
    public int blockSize()
    {
        return blockSize;
    }

    /**
     * @return true if every prompt starts with words unique to its request.
     */
    public boolean cacheResistant()
    {
        return cacheResistant;
    }

    /**
     * Append the prompt as text: one leading-space word per token.
     *
     * @param request the request.
     * @param out where to append.
     */
    public void appendText(final PlannedRequest request, final StringBuilder out)
    {
        build(request, word -> out.append(words.word(word)));
    }

    /**
     * Append the prompt as a JSON array of token ids ({@code [12,99,...]}), for completions endpoints that take ids.
     *
     * @param request the request.
     * @param out where to append.
     */
    public void appendTokenIds(final PlannedRequest request, final StringBuilder out)
    {
        out.append('[');
        final int start = out.length();
        build(request, word ->
        {
            if (out.length() > start)
            {
                out.append(',');
            }
            out.append(words.tokenId(word));
        });
        out.append(']');
    }

    /**
     * The prompt's token ids, the ones {@link #appendTokenIds} writes (for a simulator that feeds an engine directly).
     *
     * @param request the request.
     * @return its token ids.
     */
    public int[] tokenIds(final PlannedRequest request)
    {
        final int[] ids = new int[request.promptTokens()];
        final int[] count = {0};
        build(request, word -> ids[count[0]++] = words.tokenId(word));
        return ids;
    }

    /** Takes the prompt's words (indices into {@link PromptWords}) in order. */
    private interface WordSink
    {
        void add(int word);
    }

    private void build(final PlannedRequest request, final WordSink sink)
    {
        final int total = request.promptTokens();
        int position = 0;
        if (cacheResistant)
        {
            position = appendUnique(request.index(), sink, position, total);
        }
        position = appendBlocks(request, sink, position, total);
        fillUnique(request.index(), sink, position, total);
    }

    private int appendUnique(final int index, final WordSink sink, final int position, final int total)
    {
        // two words from the request index: unique for size^2 requests (millions)
        final int size = words.size();
        int p = position;
        if (p < total)
        {
            sink.add(Math.floorMod(index, size));
            p++;
        }
        if (p < total)
        {
            sink.add(Math.floorMod(index / size + 7919 * (index % 13), size));
            p++;
        }
        return p;
    }

    private int appendBlocks(final PlannedRequest request, final WordSink sink, final int position, final int total)
    {
        final long[] hashIds = request.hashIds();
        if (null == hashIds || blockSize <= 0)
        {
            return position;
        }
        int p = position;
        for (int block = 0; block < hashIds.length && p < total; block++)
        {
            random.reseed(SeededRandom.mix(seed, hashIds[block] * 0x9E3779B97F4A7C15L + 1));
            for (int i = 0; i < blockSize && p < total; i++)
            {
                sink.add(random.nextInt(words.size()));
                p++;
            }
        }
        return p;
    }

    private void fillUnique(final int index, final WordSink sink, final int position, final int total)
    {
        random.reseed(SeededRandom.mix(seed ^ 0x5DEECE66DL, index));
        for (int p = position; p < total; p++)
        {
            sink.add(random.nextInt(words.size()));
        }
    }
}
