package dev.tapedeck.workload;

/**
 * One request of a workload: when to send it and how big it is, without any measured result. Immutable by contract:
 * the {@code hashIds} array is shared, never modify it; safe to share between threads.
 *
 * @param arrivalMs when to send it, milliseconds from the workload's start (0 for the first).
 * @param promptTokens prompt length in tokens.
 * @param outputTokens tokens to generate, or {@link #UNKNOWN} to let the server decide.
 * @param hashIds prefix block ids (equal ids mean equal blocks of {@link Workload#hashBlockSize()} tokens, given equal
 *     predecessors; id {@code i} covers prompt tokens {@code [i * blockSize, min((i + 1) * blockSize, promptTokens))}
 *     so there are at most {@code ceil(promptTokens / blockSize)}), or null when the source has no prefix information.
 * @param session the conversation this request belongs to, or null for an independent request.
 * @param turn the request's position in its session, from 0.
 * @param thinkMs the client's pause between the previous turn's answer and this request, or NaN when unknown.
 */
public record WorkloadRequest(double arrivalMs, int promptTokens, int outputTokens, long[] hashIds, String session,
    int turn, double thinkMs)
{
    /** Output length left to the server. */
    public static final int UNKNOWN = -1;

    /**
     * An independent request without prefix information.
     *
     * @param arrivalMs when to send it.
     * @param promptTokens prompt length.
     * @param outputTokens output length or {@link #UNKNOWN}.
     * @return the request.
     */
    public static WorkloadRequest of(final double arrivalMs, final int promptTokens, final int outputTokens)
    {
        return new WorkloadRequest(arrivalMs, promptTokens, outputTokens, null, null, 0, Double.NaN);
    }
}
