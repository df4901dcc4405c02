package dev.tapedeck.latency.fit;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * One request of a real vLLM run, as the engine timed it: prompt and output lengths and the engine's queued,
 * scheduled, first-token and last-token timestamps (seconds on one monotonic clock).
 *
 * @param inputTokens prompt length.
 * @param outputTokens generated tokens.
 * @param queuedS entered the waiting queue.
 * @param scheduledS first scheduled.
 * @param firstTokenS first token emitted.
 * @param lastTokenS last token emitted.
 */
public record MeasuredRequest(
    int inputTokens,
    int outputTokens,
    double queuedS,
    double scheduledS,
    double firstTokenS,
    double lastTokenS)
{
    /**
     * Read LLMServingSim's {@code requests.jsonl} ({@code input_toks}, {@code output_toks}, {@code queued_ts},
     * {@code scheduled_ts}, {@code first_token_ts}, {@code last_token_ts}).
     *
     * @param file the file.
     * @return its requests in file order.
     * @throws IOException when the file cannot be read; a malformed line is reported with file and line number.
     */
    public static List<MeasuredRequest> readLlmServingSim(final Path file) throws IOException
    {
        final ObjectMapper mapper = new ObjectMapper();
        final List<MeasuredRequest> requests = new ArrayList<>();
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8))
        {
            String line;
            int number = 0;
            while (null != (line = reader.readLine()))
            {
                number++;
                if (line.isBlank())
                {
                    continue;
                }
                try
                {
                    final JsonNode node = mapper.readTree(line);
                    requests.add(new MeasuredRequest(
                        required(node, "input_toks").asInt(), required(node, "output_toks").asInt(),
                        required(node, "queued_ts").asDouble(), required(node, "scheduled_ts").asDouble(),
                        required(node, "first_token_ts").asDouble(), required(node, "last_token_ts").asDouble()));
                }
                catch (final IOException | IllegalArgumentException ex)
                {
                    throw new IOException(file + ":" + number + ": " + ex.getMessage(), ex);
                }
            }
        }
        return requests;
    }

    private static JsonNode required(final JsonNode node, final String field)
    {
        final JsonNode value = node.get(field);
        if (null == value || !value.isNumber())
        {
            throw new IllegalArgumentException("missing or non-numeric field '" + field + "'");
        }
        return value;
    }

    /**
     * @return time to first token measured from queue entry, in seconds.
     */
    public double ttftS()
    {
        return firstTokenS - queuedS;
    }

    /**
     * @return mean time per output token after the first, in seconds (0 for single-token outputs).
     */
    public double tpotS()
    {
        return outputTokens > 1 ? (lastTokenS - firstTokenS) / (outputTokens - 1) : 0.0;
    }

    /**
     * @return queue entry to last token, in seconds.
     */
    public double e2eS()
    {
        return lastTokenS - queuedS;
    }
}
