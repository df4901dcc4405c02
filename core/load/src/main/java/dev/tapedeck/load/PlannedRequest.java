package dev.tapedeck.load;

/**
 * One request a run will send: when (relative to the run's start, already time-scaled), how big, and where it sits in
 * a session. Immutable.
 *
 * @param index position in the plan (stable: it seeds the request's prompt).
 * @param offsetNs intended send time after the run's start; for a later session turn, the earliest send time.
 * @param promptTokens prompt length in tokens.
 * @param outputTokens tokens to ask for, or {@link dev.tapedeck.workload.WorkloadRequest#UNKNOWN} for the server's
 *     choice.
 * @param hashIds prefix block ids (blocks of the plan's block size), or null.
 * @param session index of the session (0..sessions-1), or -1 for an independent request.
 * @param turn position in the session.
 * @param thinkNs pause after the previous turn's answer before this turn may go, or 0.
 */
public record PlannedRequest(int index, long offsetNs, int promptTokens, int outputTokens, long[] hashIds,
    int session, int turn, long thinkNs)
{
    /**
     * @return the context the request needs on a server: its prompt plus its output (at least one token: a request
     *     whose output the server decides still generates one).
     */
    public long contextTokens()
    {
        return (long)promptTokens + Math.max(1, outputTokens);
    }
}
