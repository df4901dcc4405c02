package dev.tapedeck.nixl;

/**
 * What one READ moved.
 *
 * @param bytes bytes read.
 * @param descriptors blocks read (NIXL's descriptor count).
 * @param postNanos time to post the transfer, in nanoseconds ({@code vllm:nixl_post_time_seconds}).
 * @param transferNanos time from post to completion, in nanoseconds ({@code vllm:nixl_xfer_time_seconds}).
 */
public record PullResult(long bytes, int descriptors, long postNanos, long transferNanos)
{
}
