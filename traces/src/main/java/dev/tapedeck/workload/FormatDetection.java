package dev.tapedeck.workload;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.trace.TraceFiles;

/**
 * Tells a workload file's format from its first JSON object's keys (or a CSV header), reading no more of the file
 * than that object: {@code turns} is an AIPerf multi_turn conversation; a CSV header with {@code ContextTokens} is
 * Azure's, one with {@code Request tokens} and {@code Response tokens} BurstGPT's. Stateless; thread safe.
 */
final class FormatDetection
{
    private static final int PEEK_BYTES = 64 * 1024;

    private FormatDetection()
    {
    }

    static WorkloadFormat detect(final Path path) throws IOException
    {
        if (Files.isDirectory(path))
        {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(path, "*.{json,json.gz}"))
            {
                if (files.iterator().hasNext())
                {
                    return WorkloadFormat.KVCACHE_TESTER;
                }
            }
            throw new IllegalArgumentException(path + ": a directory without .json files; a directory is read as " +
                "kv-cache-tester conversations, one per .json file");
        }
        try (InputStream in = new BufferedInputStream(TraceFiles.openInput(path), PEEK_BYTES))
        {
            in.mark(PEEK_BYTES);
            int first = in.read();
            while (first >= 0 && Character.isWhitespace(first))
            {
                first = in.read();
            }
            in.reset();
            if (first < 0)
            {
                throw new IllegalArgumentException(path + ": the file is empty");
            }
            if ('{' == first)
            {
                return fromKeys(path, in);
            }
            return fromCsvHeader(path, in);
        }
    }

    private static WorkloadFormat fromKeys(final Path path, final InputStream in) throws IOException
    {
        final Set<String> keys = new LinkedHashSet<>();
        String metaKind = null;
        try (JsonParser parser = JsonValues.MAPPER.getFactory().createParser(in))
        {
            parser.nextToken();
            while (JsonToken.FIELD_NAME == parser.nextToken())
            {
                final String key = parser.currentName();
                keys.add(key);
                if (JsonToken.START_OBJECT == parser.nextToken() && "meta".equals(key))
                {
                    final JsonNode meta = JsonValues.MAPPER.readTree(parser);
                    metaKind = meta.path("kind").asText("");
                }
                else
                {
                    parser.skipChildren();
                }
            }
        }
        catch (final JsonProcessingException ex)
        {
            throw unknown(path, "it starts like JSON but is not valid JSON: " + ex.getOriginalMessage() + " at line " +
                (null == ex.getLocation() ? "?" : ex.getLocation().getLineNr()));
        }
        if (null != metaKind)
        {
            return "workload".equals(metaKind) ? WorkloadFormat.TAPEDECK : WorkloadFormat.TRACE;
        }
        if (keys.contains("benchmarks"))
        {
            return WorkloadFormat.GUIDELLM;
        }
        if (keys.contains("input_lens") || keys.contains("output_lens") || keys.contains("ttfts") ||
            keys.contains("num_prompts") && keys.contains("completed"))
        {
            return WorkloadFormat.VLLM_BENCH;
        }
        if (keys.contains("turns"))
        {
            return WorkloadFormat.AIPERF_MULTI_TURN;
        }
        if (keys.contains("requests") && (keys.contains("block_size") || keys.contains("hash_id_scope")))
        {
            return WorkloadFormat.KVCACHE_TESTER;
        }
        if (keys.contains("prompt_tokens") && keys.contains("ttft_ms"))
        {
            return WorkloadFormat.TRACE;
        }
        if (keys.contains("arrival_ms") && keys.contains("prompt_tokens"))
        {
            // a workload line always has turn (tapedeck writes it); a trace record without meta or gaps has none
            final boolean workloadFields = keys.contains("turn") || keys.contains("session") ||
                keys.contains("hash_ids") || keys.contains("think_ms");
            return workloadFields ? WorkloadFormat.TAPEDECK : WorkloadFormat.TRACE; // TAPEDECK explains a lost meta
        }
        if (keys.contains("timestamp") && keys.contains("input_length"))
        {
            if (keys.contains("hash_ids"))
            {
                return WorkloadFormat.MOONCAKE;
            }
            throw unknown(path, "its lines have timestamp and input_length but no hash_ids: that is Mooncake-style " +
                "(timestamp in milliseconds: --format mooncake) or guidellm's trace_synthetic (timestamp in seconds: " +
                "--format guidellm-replay), and the units differ by 1000x");
        }
        throw unknown(path, "its first JSON object has the keys " + String.join(", ", keys));
    }

    private static WorkloadFormat fromCsvHeader(final Path path, final InputStream in) throws IOException
    {
        final BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        final String header = reader.readLine();
        final String columns = null == header ? "" : header.strip().toLowerCase(Locale.ROOT).replace("\"", "");
        if (AzureLoader.isHeader(columns))
        {
            return WorkloadFormat.AZURE;
        }
        if (BurstGptLoader.isHeader(columns))
        {
            return WorkloadFormat.BURSTGPT;
        }
        final String shown = null == header ? "" : header.length() > 80 ? header.substring(0, 80) + "..." : header;
        throw unknown(path, "it is not JSON and its first line is neither the Azure CSV header " +
            "TIMESTAMP,ContextTokens,GeneratedTokens nor BurstGPT's Timestamp,...,Request tokens,Response tokens: '" +
            shown + "'");
    }

    private static IllegalArgumentException unknown(final Path path, final String why)
    {
        return new IllegalArgumentException("cannot tell the format of " + path + ": " + why + "; name it with " +
            "--format, one of " + WorkloadFormat.names());
    }
}
