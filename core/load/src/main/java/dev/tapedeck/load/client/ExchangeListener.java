package dev.tapedeck.load.client;

/**
 * Told how each exchange ended, on the event loop that ran it. Implementations record and hand follow-up work to
 * their own threads; they must not block.
 */
public interface ExchangeListener
{
    /**
     * The request was written to its connection.
     *
     * @param exchange the exchange.
     * @param writtenNs when.
     */
    void onWritten(Exchange exchange, long writtenNs);

    /**
     * A chunk carrying tokens arrived after an earlier one.
     *
     * @param exchange the exchange.
     * @param gapNs time since the previous token chunk.
     * @param tokens tokens the chunk carries (each gets {@code gapNs / tokens} as its inter-token latency).
     */
    void onTokenGap(Exchange exchange, long gapNs, long tokens);

    /**
     * The exchange ended.
     *
     * @param exchange the exchange.
     * @param endNs when.
     * @param errorKind null on success, else the kind ({@code http_503}, {@code connect_failed},
     *     {@code connection_reset}, {@code connection_closed}, {@code timeout}, {@code malformed_sse},
     *     {@code malformed_json}, {@code stream_error}, {@code server_abort}, {@code incomplete}); for the prefill
     *     hop of a two-hop exchange, the kind prefixed {@code prefill_}, or {@code prefill_no_kv_transfer_params}.
     */
    void onFinished(Exchange exchange, long endNs, String errorKind);
}
