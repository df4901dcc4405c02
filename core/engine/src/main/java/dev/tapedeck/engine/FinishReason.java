package dev.tapedeck.engine;

/**
 * Why a request stopped, with vLLM's names as they appear in OpenAI responses and in the
 * {@code vllm:request_success_total{finished_reason}} label.
 */
public enum FinishReason
{
    /** End of sequence: an EOS token, a stop token id or (in the frontend) a stop string. */
    STOP("stop"),
    /** The output reached {@code max_tokens} or the model's context length. */
    LENGTH("length"),
    /** The client went away or the request was aborted. */
    ABORT("abort"),
    /** The engine could not serve the request. */
    ERROR("error");

    private final String wireName;

    FinishReason(final String wireName)
    {
        this.wireName = wireName;
    }

    /**
     * @return the lower-case name used on the wire and in metrics.
     */
    public String wireName()
    {
        return wireName;
    }
}
