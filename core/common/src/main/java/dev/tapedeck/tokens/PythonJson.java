package dev.tapedeck.tokens;

import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * JSON as Python's {@code json.dumps(value, ensure_ascii=False[, indent=N])} writes it, which is what Hugging Face's
 * {@code tojson} filter puts into prompts: {@code ", "} and {@code ": "} between items and keys (with an indent,
 * {@code ","} and a new line), non-ASCII characters as they are. Token counts of rendered tools depend on it.
 * Stateless.
 */
public final class PythonJson
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private PythonJson()
    {
    }

    /**
     * @param value a JSON-like value (maps, lists, strings, numbers, booleans, null).
     * @return its JSON text on one line.
     */
    public static String dumps(final Object value)
    {
        return dumps(value, -1);
    }

    /**
     * @param value a JSON-like value.
     * @param indent spaces per level, or -1 for one line.
     * @return its JSON text.
     */
    public static String dumps(final Object value, final int indent)
    {
        final StringBuilder out = new StringBuilder(64);
        write(JSON.valueToTree(value), out, indent, 0);
        return out.toString();
    }

    private static void write(final JsonNode node, final StringBuilder out, final int indent, final int level)
    {
        if (!node.isContainerNode())
        {
            out.append(scalar(node));
            return;
        }
        if (node.isEmpty())
        {
            out.append(node.isObject() ? "{}" : "[]");
            return;
        }
        out.append(node.isObject() ? '{' : '[');
        final String separator = indent < 0 ? ", " : ",";
        boolean first = true;
        if (node.isObject())
        {
            for (final Map.Entry<String, JsonNode> field : node.properties())
            {
                out.append(first ? "" : separator);
                first = false;
                newline(out, indent, level + 1);
                out.append(scalar(JSON.getNodeFactory().textNode(field.getKey()))).append(": ");
                write(field.getValue(), out, indent, level + 1);
            }
        }
        else
        {
            for (final JsonNode element : node)
            {
                out.append(first ? "" : separator);
                first = false;
                newline(out, indent, level + 1);
                write(element, out, indent, level + 1);
            }
        }
        newline(out, indent, level);
        out.append(node.isObject() ? '}' : ']');
    }

    private static void newline(final StringBuilder out, final int indent, final int level)
    {
        if (indent >= 0)
        {
            out.append('\n').append(" ".repeat(indent * level));
        }
    }

    private static String scalar(final JsonNode node)
    {
        try
        {
            return JSON.writeValueAsString(node);
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalArgumentException("cannot write " + node, ex);
        }
    }
}
