package dev.tapedeck.workload;

import java.util.List;

/**
 * A request schedule to replay: requests sorted by arrival, with the block size behind their {@code hash_ids}.
 * Immutable once built.
 *
 * @param source where it came from ({@code mooncake}, {@code azure}, {@code kvcache-tester}, ...).
 * @param hashBlockSize tokens per hash id (512 for Mooncake, 64 for kv-cache-tester), 0 when there are none.
 * @param requests requests in arrival order.
 * @param notes what the loader adjusted or skipped, for the user to read.
 */
public record Workload(String source, int hashBlockSize, List<WorkloadRequest> requests, List<String> notes)
{
}
