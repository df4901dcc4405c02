package dev.tapedeck.engine;

import dev.tapedeck.latency.StepShape;

/**
 * One composed engine step: which requests run, with how many tokens each. Reused for every step (preallocated to
 * {@code max-num-seqs} entries); a decode entry carries 1 token plus its speculative draft tokens, a prefill entry its
 * chunk.
 * <b>Not thread safe</b>; owned by the engine.
 */
public final class Step implements StepShape
{
    private final Request[] requests;
    private final int[] tokens;
    private int size;
    private int decodeRequests;
    private int prefillRequests;
    private int prefillTokens;
    private int draftTokens;
    private long decodeContextTokens;
    /** Decodes timed by their own recorded or paced gaps ({@link StepTimer}); most steps have none. */
    private int pacedDecodes;
    private long prefillAttentionPairs;
    private int runningRequests;
    private long startNs;
    private long endNs;
    private long sequence;

    Step(final int capacity)
    {
        requests = new Request[capacity];
        tokens = new int[capacity];
    }

    void reset(final long stepStartNs, final long stepSequence)
    {
        for (int i = 0; i < size; i++)
        {
            requests[i] = null;
        }
        size = 0;
        decodeRequests = 0;
        prefillRequests = 0;
        prefillTokens = 0;
        draftTokens = 0;
        decodeContextTokens = 0;
        pacedDecodes = 0;
        prefillAttentionPairs = 0;
        runningRequests = 0;
        startNs = stepStartNs;
        endNs = stepStartNs;
        sequence = stepSequence;
    }

    /**
     * Start the next step of a steady batch with the same requests and tokens: each decoded one token in this step,
     * so the batch's context grew by one token per request.
     */
    void repeat(final long stepStartNs, final long stepSequence)
    {
        startNs = stepStartNs;
        endNs = stepStartNs;
        sequence = stepSequence;
        decodeContextTokens += decodeRequests;
    }

    void addDecode(final Request request, final int drafts)
    {
        requests[size] = request;
        tokens[size] = 1 + drafts;
        size++;
        decodeRequests++;
        draftTokens += drafts;
        decodeContextTokens += request.contextLength();
        if (pacesItsStep(request))
        {
            pacedDecodes++;
        }
    }

    void addPrefill(final Request request, final int chunkTokens)
    {
        requests[size] = request;
        tokens[size] = chunkTokens;
        size++;
        prefillRequests++;
        prefillTokens += chunkTokens;
        prefillAttentionPairs += attentionPairs(request, chunkTokens);
    }

    /**
     * @return true when the request's decode times its own step ({@link StepTimer}): recorded step gaps left
     *     ({@code --replay-steps}) or a pacing latency model.
     */
    private static boolean pacesItsStep(final Request request)
    {
        return null != request.pacing || request.hasRecordedStep();
    }

    /** Query-key pairs a chunk's causal attention covers: each chunk token attends to the computed context and to
     * the chunk's tokens up to itself. */
    private static long attentionPairs(final Request request, final int chunkTokens)
    {
        return (long)chunkTokens * request.numComputedTokens + (long)chunkTokens * (chunkTokens + 1) / 2;
    }

    /**
     * Take a preempted request out of the step.
     *
     * @return the tokens it had been given, 0 if it was not in the step.
     */
    int remove(final Request request)
    {
        for (int i = 0; i < size; i++)
        {
            if (requests[i] == request)
            {
                final int removed = tokens[i];
                if (Request.State.DECODE == request.state)
                {
                    decodeRequests--;
                    draftTokens -= removed - 1;
                    decodeContextTokens -= request.contextLength();
                    if (pacesItsStep(request))
                    {
                        pacedDecodes--;
                    }
                }
                else
                {
                    prefillRequests--;
                    prefillTokens -= removed;
                    prefillAttentionPairs -= attentionPairs(request, removed);
                }
                System.arraycopy(requests, i + 1, requests, i, size - i - 1);
                System.arraycopy(tokens, i + 1, tokens, i, size - i - 1);
                requests[--size] = null;
                return removed;
            }
        }
        return 0;
    }

    /**
     * @return decodes whose request has recorded step gaps left or a pacing model ({@link #pacesItsStep}).
     */
    int pacedDecodes()
    {
        return pacedDecodes;
    }

    void runningRequests(final int count)
    {
        runningRequests = count;
    }

    void endNs(final long value)
    {
        endNs = value;
    }

    /**
     * @return entries in this step.
     */
    public int size()
    {
        return size;
    }

    /**
     * @param index entry index.
     * @return the request of that entry.
     */
    public Request request(final int index)
    {
        return requests[index];
    }

    /**
     * @param index entry index.
     * @return tokens scheduled for that entry (1 plus its draft tokens for a decode, the chunk for a prefill).
     */
    public int tokens(final int index)
    {
        return tokens[index];
    }

    /**
     * @return total tokens scheduled (what counts against the budget).
     */
    public int totalTokens()
    {
        return decodeRequests + draftTokens + prefillTokens;
    }

    /**
     * @return speculative draft tokens scheduled with the decodes (0 without speculative decoding).
     */
    public int draftTokens()
    {
        return draftTokens;
    }

    /**
     * @return when the step started.
     */
    public long startNs()
    {
        return startNs;
    }

    /**
     * @return when the step ends.
     */
    public long endNs()
    {
        return endNs;
    }

    /**
     * @return the step's number, counting from 1 for the engine's first step.
     */
    public long sequence()
    {
        return sequence;
    }

    @Override
    public int scheduledTokens()
    {
        return totalTokens();
    }

    @Override
    public int decodeRequests()
    {
        return decodeRequests;
    }

    @Override
    public int prefillTokens()
    {
        return prefillTokens;
    }

    @Override
    public int prefillRequests()
    {
        return prefillRequests;
    }

    @Override
    public long decodeContextTokens()
    {
        return decodeContextTokens;
    }

    @Override
    public long prefillAttentionPairs()
    {
        return prefillAttentionPairs;
    }

    @Override
    public int runningRequests()
    {
        return runningRequests;
    }

    boolean isEmpty()
    {
        return 0 == size;
    }
}
