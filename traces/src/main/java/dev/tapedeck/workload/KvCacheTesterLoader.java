package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.trace.TraceFormatException;

/**
 * kv-cache-tester (WEKA / Claude Code) conversation traces: one conversation per JSON file, or a directory of them
 * ({@code *.json}, {@code *.json.gz}, in name order). Per request {@code t} (seconds from the conversation's start),
 * {@code in}, {@code out}, {@code hash_ids} naming {@code block_size}-token blocks (64; only full blocks, so
 * {@code len(hash_ids) == floor(in / 64)}), {@code think_time} (seconds). Entries of type {@code subagent} hold their
 * own {@code requests} whose {@code t} restarts at 0: they are offset by the sub-agent's {@code t}. Each conversation
 * and each sub-agent is a session ({@code id}, {@code id/agent_id}), turns in file order. In a directory every
 * conversation starts at 0 ms, and hash ids of {@code local} scope are moved apart per file
 * ({@code (file index + 1) * 2^32 + id}) so that conversations share no blocks by accident. Not thread safe: one
 * instance per load.
 */
final class KvCacheTesterLoader
{
    /** kv-cache-tester's block size, used when a file does not state one (with a note). */
    static final int DEFAULT_BLOCK_SIZE = 64;
    private static final long NAMESPACE_BITS = 32;

    private final WorkloadBuilder builder = new WorkloadBuilder(WorkloadFormat.KVCACHE_TESTER.cliName());
    private final NoteTally floorRule = new NoteTally("requests break kv-cache-tester's block rule len(hash_ids) == " +
        "floor(in / block_size)");
    private final NoteTally noBlockSize = new NoteTally("files state no block_size; kv-cache-tester's 64 tokens used");
    private int blockSize;
    private long namespace;
    private int subagents;

    private KvCacheTesterLoader()
    {
    }

    static Workload load(final Path path) throws IOException
    {
        return new KvCacheTesterLoader().loadAll(path);
    }

    private Workload loadAll(final Path path) throws IOException
    {
        final List<Path> files = new ArrayList<>();
        if (Files.isDirectory(path))
        {
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(path, "*.{json,json.gz}"))
            {
                entries.forEach(files::add);
            }
            files.sort(null);
            if (files.isEmpty())
            {
                throw new IllegalArgumentException(path + ": no .json files in the directory");
            }
        }
        else
        {
            files.add(path);
        }
        for (int index = 0; index < files.size(); index++)
        {
            loadConversation(files.get(index), files.size() > 1 ? index + 1 : 0);
        }
        builder.hashBlockSize(blockSize);
        builder.note("t and think_time are in seconds (kv-cache-tester); arrivals are t x 1000 ms, sub-agent " +
            "requests offset by their sub-agent's t; hash_ids name " + blockSize + "-token blocks (full blocks only)");
        if (files.size() > 1)
        {
            builder.note(files.size() + " conversations from " + path + ", each starting at 0 ms (the files share " +
                "no clock); hash ids of local scope in file k (1-based, name order) became k x 2^32 + id");
        }
        if (subagents > 0)
        {
            builder.note(subagents + (1 == subagents ? " sub-agent" : " sub-agents") + ", each its own session");
        }
        floorRule.addTo(builder.notes());
        noBlockSize.addTo(builder.notes());
        return builder.build(false);
    }

    /**
     * @param fileNumber 1-based index in a directory (its hash-id namespace), 0 for a single file.
     */
    private void loadConversation(final Path file, final int fileNumber) throws IOException
    {
        final LocatedJson doc = LocatedJson.read(file, Set.of());
        final JsonNode root = doc.root();
        final String where = doc.where(root, "conversation");
        if (!root.isObject())
        {
            throw JsonValues.error(where, "must be a JSON object with requests");
        }
        final JsonNode idValue = JsonValues.optional(root, "id");
        final String fileName = file.getFileName().toString();
        final String id = null == idValue ? fileName.substring(0, fileName.indexOf('.') > 0 ? fileName.indexOf('.') :
            fileName.length()) : JsonValues.string(idValue, where, "id");
        final JsonNode size = JsonValues.optional(root, "block_size");
        final int fileBlockSize;
        if (null == size)
        {
            noBlockSize.add(doc.name());
            fileBlockSize = DEFAULT_BLOCK_SIZE;
        }
        else
        {
            fileBlockSize = JsonValues.count(size, where, "block_size");
        }
        if (fileBlockSize < 1)
        {
            throw JsonValues.error(where, "block_size must be at least 1");
        }
        if (0 != blockSize && blockSize != fileBlockSize)
        {
            throw JsonValues.error(where, "block_size " + fileBlockSize + " differs from the other files' " +
                blockSize + "; load them separately");
        }
        blockSize = fileBlockSize;
        builder.hashBlockSize(blockSize);
        final JsonNode scope = JsonValues.optional(root, "hash_id_scope");
        final boolean global = null != scope && "global".equals(scope.asText());
        namespace = global || 0 == fileNumber ? 0 : (long)fileNumber << NAMESPACE_BITS;
        final JsonNode requests = JsonValues.required(root, "requests", where);
        readRequests(doc, requests, "requests", id, 0);
    }

    private void readRequests(final LocatedJson doc, final JsonNode requests, final String path, final String session,
        final double offsetS)
    {
        if (!requests.isArray())
        {
            throw JsonValues.error(doc.where(requests, path), "must be an array");
        }
        int turn = 0;
        int subagent = 0;
        for (int i = 0; i < requests.size(); i++)
        {
            final JsonNode entry = requests.get(i);
            final String entryPath = path + "[" + i + "]";
            final String where = doc.where(entry, entryPath);
            if (!entry.isObject())
            {
                throw JsonValues.error(where, "must be an object");
            }
            final double tS = JsonValues.nonNegative(JsonValues.required(entry, "t", where), where, "t");
            final JsonNode type = JsonValues.optional(entry, "type");
            if (null != type && "subagent".equals(type.asText()))
            {
                final JsonNode agent = JsonValues.optional(entry, "agent_id");
                final String agentName = null == agent ? "subagent-" + subagent : agent.asText();
                subagent++;
                subagents++;
                readRequests(doc, JsonValues.required(entry, "requests", where), entryPath + ".requests",
                    session + "/" + agentName, offsetS + tS);
                continue;
            }
            final long in = JsonValues.natural(JsonValues.required(entry, "in", where), where, "in");
            final long out = JsonValues.natural(JsonValues.required(entry, "out", where), where, "out");
            final JsonNode ids = JsonValues.optional(entry, "hash_ids");
            final long[] hashIds = null == ids ? null : moveToNamespace(JsonValues.unsignedLongs(ids, where,
                "hash_ids"), where);
            if (null != hashIds && hashIds.length != in / blockSize)
            {
                floorRule.add(where + ": " + hashIds.length + " ids for " + in + " tokens, expected " + in / blockSize);
            }
            final JsonNode think = JsonValues.optional(entry, "think_time");
            final double thinkMs = null == think ? Double.NaN :
                JsonValues.nonNegative(think, where, "think_time") * 1000.0;
            builder.add(where, (offsetS + tS) * 1000.0, in, out, hashIds, session, turn++, thinkMs);
        }
    }

    private long[] moveToNamespace(final long[] ids, final String where)
    {
        if (0 == namespace)
        {
            return ids;
        }
        for (int i = 0; i < ids.length; i++)
        {
            if (ids[i] < 0 || ids[i] >= 1L << NAMESPACE_BITS)
            {
                throw new TraceFormatException(where + ": hash_ids[" + i + "] = " + Long.toUnsignedString(ids[i]) +
                    " does not fit the 32 bits a local-scope id may use when a directory is loaded");
            }
            ids[i] |= namespace;
        }
        return ids;
    }
}
