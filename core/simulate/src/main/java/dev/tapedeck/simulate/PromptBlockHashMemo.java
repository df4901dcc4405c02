package dev.tapedeck.simulate;

import java.util.HashMap;
import java.util.Map;

import dev.tapedeck.kv.BlockHashAlgo;
import dev.tapedeck.kv.BlockHasher;
import dev.tapedeck.load.PlannedRequest;
import dev.tapedeck.load.PromptFactory;

/**
 * The engine's block hashes of the simulated prompts, each shared prefix hashed once. A {@link PromptFactory} without
 * cache resistance gives hash id {@code h} at place {@code b} of a prompt the same {@code planBlockSize} tokens
 * wherever it appears, so two prompts whose first {@code k} hash ids are equal have equal first
 * {@code k x planBlockSize} tokens (when both are that long), and so equal engine block hashes over them: the chain
 * of a block depends only on the tokens up to its end. The memo is a trie of hash-id prefixes; each node keeps the
 * digest after its plan block and the engine blocks' hashes inside it. Only whole plan blocks are kept; the rest of
 * a prompt (a plan block it cuts short, tokens beyond its ids) is hashed for the request alone. The values are those
 * the engine computes itself ({@link BlockHasher#continueChain}, checked by {@code PromptBlockHashMemoTest} and by
 * byte-identical outputs on the Mooncake hour).
 * <p>
 * Used only when the engine block size divides the plan's block size, without LoRA or cache salt (simulate has
 * neither). Not thread safe: one per run.
 */
final class PromptBlockHashMemo
{
    private final BlockHasher hasher;
    private final int blockSize;
    private final int planBlockSize;
    private final int blocksPerPlanBlock;
    private final Map<Key, Node> nodes = new HashMap<>();
    private final byte[] root;
    private final byte[] parent;
    private int nextNodeId = 1;

    /** A plan block after the prefix ending at node {@code parentId} (0: the prompt's start). */
    private record Key(int parentId, long hashId)
    {
    }

    /** A hash-id prefix: the digest after its last plan block and the engine block hashes inside that block. */
    private record Node(int id, byte[] digest, long[] hashes)
    {
    }

    /**
     * @param seed the engine's {@code --prefix-caching-hash-seed}.
     * @param algo the engine's {@code --prefix-caching-hash-algo}.
     * @param blockSize the engine's block size.
     * @param planBlockSize tokens per hash id of the plan, a multiple of {@code blockSize}.
     */
    PromptBlockHashMemo(final String seed, final BlockHashAlgo algo, final int blockSize, final int planBlockSize)
    {
        if (!applies(blockSize, planBlockSize))
        {
            throw new IllegalArgumentException("plan blocks of " + planBlockSize + " tokens are not whole engine " +
                "blocks of " + blockSize);
        }
        hasher = new BlockHasher(seed, algo);
        this.blockSize = blockSize;
        this.planBlockSize = planBlockSize;
        blocksPerPlanBlock = planBlockSize / blockSize;
        root = hasher.rootHash();
        parent = root.clone();
    }

    /**
     * @return true if prompts of plan blocks of {@code planBlockSize} tokens share whole engine blocks.
     */
    static boolean applies(final int blockSize, final int planBlockSize)
    {
        return blockSize > 0 && planBlockSize > 0 && 0 == planBlockSize % blockSize;
    }

    /**
     * @param request the planned request.
     * @param tokenIds its prompt, as the {@link PromptFactory} built it.
     * @return the engine's hash of each full block of the prompt.
     */
    long[] blockHashes(final PlannedRequest request, final int[] tokenIds)
    {
        final long[] hashes = new long[tokenIds.length / blockSize];
        final long[] hashIds = request.hashIds();
        System.arraycopy(root, 0, parent, 0, root.length);
        int nodeId = 0;
        int done = 0;
        final int planBlocks = null == hashIds ? 0 : Math.min(hashIds.length, tokenIds.length / planBlockSize);
        for (int b = 0; b < planBlocks; b++)
        {
            final Key key = new Key(nodeId, hashIds[b]);
            Node node = nodes.get(key);
            if (null == node)
            {
                final long[] inside = new long[blocksPerPlanBlock];
                hasher.continueChain(tokenIds, blockSize, done, blocksPerPlanBlock, null, null, parent, inside, 0);
                node = new Node(nextNodeId++, parent.clone(), inside);
                nodes.put(key, node);
            }
            else
            {
                System.arraycopy(node.digest(), 0, parent, 0, parent.length);
            }
            System.arraycopy(node.hashes(), 0, hashes, done, blocksPerPlanBlock);
            done += blocksPerPlanBlock;
            nodeId = node.id();
        }
        hasher.continueChain(tokenIds, blockSize, done, hashes.length - done, null, null, parent, hashes, done);
        return hashes;
    }
}
