package dev.tapedeck.engine;

/**
 * The engine's side of prefill/decode disaggregation, after vLLM's KV connector scheduler API: whoever implements it
 * (the NIXL connector of {@code dev.tapedeck.kvtransfer}) decides which prompt tokens a request loads from a remote
 * engine instead of computing, moves them, and keeps a prefill's blocks until its decode has read them.
 * <ul>
 *   <li>Decode side: at a request's first admission the engine asks {@link #remoteTokens}; if some, it allocates
 *       their blocks, parks the request (not running, holding no step budget) and calls {@link #startLoad}. The load
 *       ends either at the time {@code startLoad} returned (a modelled transfer) or when {@link #poll} reports it;
 *       the request then goes back to the waiting queue with those tokens computed, to compute the rest (at least its
 *       last token) and decode.</li>
 *   <li>Prefill side: {@link #requestFinished} sees every finished request and may keep its blocks (returning
 *       true) until {@link #poll} releases them; it sets the request's {@link Request#kvTransferResult}.</li>
 * </ul>
 * <b>Threading</b>: every method is called on the engine's thread. Work done elsewhere (I/O threads) is handed over
 * through {@link #poll}; an implementation that completes work elsewhere must wake the engine's driver itself.
 */
public interface KvConnector
{
    /** {@link #startLoad} returns this when {@link #poll} will report the load's end. */
    long LOAD_ASYNC = Long.MIN_VALUE;

    /**
     * vLLM's {@code get_num_new_matched_tokens}: asked once per request, at its first admission.
     *
     * @param request a request with nothing computed.
     * @param localHitTokens prompt tokens this engine's prefix cache already holds.
     * @return prompt tokens beyond those that will be loaded from a remote engine; 0 for none.
     */
    int remoteTokens(Request request, int localHitTokens);

    /**
     * Blocks were allocated for the remote tokens: start loading them.
     *
     * @param request the request; its blocks {@code [fromBlock, toBlock)} ({@link Request#blockId}) are to be filled.
     * @param fromBlock first block to load (after the local prefix hit).
     * @param toBlock one past the last block to load.
     * @param nowNs the engine's time.
     * @return when the load completes on the engine's clock (a modelled transfer), or {@link #LOAD_ASYNC}.
     */
    long startLoad(Request request, int fromBlock, int toBlock, long nowNs);

    /**
     * A request finished, for any reason (also one aborted while loading). Called before the sink hears of it.
     *
     * @param request the request.
     * @param nowNs the engine's time.
     * @return true to keep its blocks until {@link Completions#onReleased} (a prefill whose decode will read them).
     */
    boolean requestFinished(Request request, long nowNs);

    /**
     * Report what completed since the last call: loads, and kept blocks to release (notified or expired).
     *
     * @param completions told of each.
     * @param nowNs the engine's time.
     */
    void poll(Completions completions, long nowNs);

    /**
     * @return when {@link #poll} next has something to do by time alone (an expiry), or {@link Long#MAX_VALUE}.
     */
    long nextDeadlineNs();

    /** Told of completed connector work, on the engine's thread. */
    interface Completions
    {
        /**
         * An asynchronous load ended well: the blocks hold the remote tokens.
         *
         * @param request the request.
         */
        void onLoaded(Request request);

        /**
         * A load failed.
         *
         * @param request the request.
         * @param recompute true to compute the tokens locally (vLLM's {@code kv_load_failure_policy=recompute}), false
         *     to fail the request ({@code fail}, vLLM's default).
         */
        void onLoadFailed(Request request, boolean recompute);

        /**
         * Blocks kept by {@link #requestFinished} may be freed.
         *
         * @param request the finished request.
         */
        void onReleased(Request request);
    }
}
