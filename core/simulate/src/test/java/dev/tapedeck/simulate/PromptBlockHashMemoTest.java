package dev.tapedeck.simulate;

import org.junit.jupiter.api.Test;

import dev.tapedeck.kv.BlockHashAlgo;
import dev.tapedeck.kv.BlockHasher;
import dev.tapedeck.load.PlannedRequest;
import dev.tapedeck.load.PromptFactory;
import dev.tapedeck.load.PromptWords;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The memo gives every prompt the hashes the engine computes for it alone, whether its plan blocks were seen before
 * (shared prefixes, the same id after another prefix, prompts that cut a block short, ids beyond the prompt, prompts
 * without ids), for both hash functions and engine blocks of several sizes.
 */
class PromptBlockHashMemoTest
{
    private static final long[][] IDS = {
        {1, 2, 3}, {1, 2, 3, 4}, {1, 2}, {1, 2, 3, 4, 5, 6}, {7, 2, 3}, {1, 7, 3}, null, {}, {1, 2, 3, 4}, {9},
        {1, 2, 3, 4, 5}, {7, 2, 3, 4},
    };
    private static final int[] PROMPT_TOKENS = {300, 400, 250, 100, 256, 320, 90, 40, 410, 64, 257, 400};

    @Test
    void shouldGiveTheHashesTheEngineComputes()
    {
        final PromptWords words = PromptWords.builtin();
        for (final BlockHashAlgo algo : BlockHashAlgo.values())
        {
            for (final int blockSize : new int[] {1, 4, 16, 64})
            {
                final int planBlockSize = 64;
                final PromptFactory prompts = new PromptFactory(words, 42, planBlockSize, false);
                final PromptBlockHashMemo memo = new PromptBlockHashMemo("7", algo, blockSize, planBlockSize);
                final BlockHasher hasher = new BlockHasher("7", algo);
                for (int round = 0; round < 2; round++)
                {
                    for (int i = 0; i < IDS.length; i++)
                    {
                        final PlannedRequest request = new PlannedRequest(i, 0, PROMPT_TOKENS[i], 10, IDS[i], -1, 0,
                            0);
                        final int[] tokens = prompts.tokenIds(request);
                        assertArrayEquals(hasher.blockHashes(tokens, blockSize, null, null),
                            memo.blockHashes(request, tokens), algo + ", block size " + blockSize + ", request " + i);
                    }
                }
            }
        }
    }

    @Test
    void shouldApplyOnlyToWholeEngineBlocks()
    {
        assertTrue(PromptBlockHashMemo.applies(16, 512));
        assertFalse(PromptBlockHashMemo.applies(16, 24));
        assertFalse(PromptBlockHashMemo.applies(16, 0));
    }
}
