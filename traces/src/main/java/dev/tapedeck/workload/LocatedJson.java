package dev.tapedeck.workload;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.zip.ZipException;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.tapedeck.trace.TraceFiles;
import dev.tapedeck.trace.TraceFormatException;

/**
 * A whole JSON document as a Jackson tree that remembers the line each object and array starts on, so a loader can
 * report {@code file:line: path: what is wrong} for a value deep inside a report. Fields named in the skip set are
 * not kept (generated texts, prompts), which keeps large reports small in memory. Immutable once read; not meant to
 * be shared between threads.
 */
final class LocatedJson
{
    private final String name;
    private final JsonNode root;
    private final Map<JsonNode, Long> lines;

    private LocatedJson(final String name, final JsonNode root, final Map<JsonNode, Long> lines)
    {
        this.name = name;
        this.root = root;
        this.lines = lines;
    }

    /**
     * @param path a JSON file, gzip or plain.
     * @param skippedFields names of fields whose values are dropped wherever they occur.
     * @return the document.
     * @throws IOException if the file cannot be read.
     */
    static LocatedJson read(final Path path, final Set<String> skippedFields) throws IOException
    {
        try (InputStream in = TraceFiles.openInput(path))
        {
            return read(path.toString(), in, skippedFields);
        }
    }

    static LocatedJson read(final String name, final InputStream in, final Set<String> skippedFields)
        throws IOException
    {
        final Map<JsonNode, Long> lines = new IdentityHashMap<>();
        try (JsonParser parser = JsonValues.MAPPER.getFactory().createParser(in))
        {
            if (null == parser.nextToken())
            {
                throw new TraceFormatException(name + ": the file is empty");
            }
            final JsonNode root = readValue(parser, skippedFields, lines);
            if (null != parser.nextToken())
            {
                throw new TraceFormatException(name + ":" + parser.currentTokenLocation().getLineNr() +
                    ": unexpected content after the JSON document");
            }
            return new LocatedJson(name, root, lines);
        }
        catch (final JsonProcessingException ex)
        {
            final long line = null == ex.getLocation() ? 0 : ex.getLocation().getLineNr();
            throw new TraceFormatException(name + ":" + line + ": not valid JSON: " + ex.getOriginalMessage(), ex);
        }
        catch (final ZipException ex)
        {
            throw new TraceFormatException(name + ": corrupt gzip data: " + ex.getMessage(), ex);
        }
    }

    private static JsonNode readValue(final JsonParser parser, final Set<String> skippedFields,
        final Map<JsonNode, Long> lines) throws IOException
    {
        final JsonNodeFactory nodes = JsonNodeFactory.instance;
        final JsonToken token = parser.currentToken();
        switch (token)
        {
            case START_OBJECT ->
            {
                final ObjectNode object = nodes.objectNode();
                lines.put(object, (long)parser.currentTokenLocation().getLineNr());
                while (JsonToken.FIELD_NAME == parser.nextToken())
                {
                    final String field = parser.currentName();
                    parser.nextToken();
                    if (skippedFields.contains(field))
                    {
                        parser.skipChildren();
                        continue;
                    }
                    object.set(field, readValue(parser, skippedFields, lines));
                }
                return object;
            }
            case START_ARRAY ->
            {
                final ArrayNode array = nodes.arrayNode();
                lines.put(array, (long)parser.currentTokenLocation().getLineNr());
                while (JsonToken.END_ARRAY != parser.nextToken())
                {
                    array.add(readValue(parser, skippedFields, lines));
                }
                return array;
            }
            case VALUE_STRING ->
            {
                return nodes.textNode(parser.getText());
            }
            case VALUE_NUMBER_INT ->
            {
                return switch (parser.getNumberType())
                {
                    case BIG_INTEGER -> nodes.numberNode(parser.getBigIntegerValue());
                    default -> nodes.numberNode(parser.getLongValue());
                };
            }
            case VALUE_NUMBER_FLOAT ->
            {
                return nodes.numberNode(parser.getDoubleValue());
            }
            case VALUE_TRUE, VALUE_FALSE ->
            {
                return nodes.booleanNode(JsonToken.VALUE_TRUE == token);
            }
            case VALUE_NULL ->
            {
                return nodes.nullNode();
            }
            default -> throw new TraceFormatException(
                "unexpected JSON token " + token + " at line " + parser.currentTokenLocation().getLineNr());
        }
    }

    /**
     * @return the document's root value.
     */
    JsonNode root()
    {
        return root;
    }

    /**
     * @return the file's name as used in messages.
     */
    String name()
    {
        return name;
    }

    /**
     * @param node an object or array of this document.
     * @param path its JSON path, for the message ({@code requests[3]}).
     * @return {@code file:line: path}, the prefix of a message about it.
     */
    String where(final JsonNode node, final String path)
    {
        final Long line = lines.get(node);
        return name + ":" + (null == line ? 1 : line) + ": " + path;
    }
}
