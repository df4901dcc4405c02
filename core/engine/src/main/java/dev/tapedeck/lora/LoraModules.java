package dev.tapedeck.lora;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Reads vLLM's {@code --lora-modules} values: each is {@code NAME=PATH} or a JSON object
 * {@code {"name": ..., "path": ..., "base_model_name": ...}} ({@code base_model_name} optional). The adapters get the
 * ids 1..K in the order given, as vLLM numbers its static adapters. Stateless and thread safe.
 */
public final class LoraModules
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private LoraModules()
    {
    }

    /**
     * @param values the flag's values, in order.
     * @param servedModelNames names of the base model: an adapter may not take one of them.
     * @return the adapters, ids 1..K.
     * @throws IllegalArgumentException naming the value that is malformed or a name used twice.
     */
    public static List<LoraAdapter> parse(final List<String> values, final List<String> servedModelNames)
    {
        final List<LoraAdapter> adapters = new ArrayList<>(values.size());
        final Set<String> names = new HashSet<>();
        for (final String value : values)
        {
            final LoraAdapter adapter = parseOne(value.trim(), adapters.size() + 1);
            if (!names.add(adapter.name()))
            {
                throw new IllegalArgumentException("--lora-modules: the adapter name '" + adapter.name() +
                    "' is given twice");
            }
            if (servedModelNames.contains(adapter.name()))
            {
                throw new IllegalArgumentException("--lora-modules: the adapter name '" + adapter.name() +
                    "' is already a served model name");
            }
            adapters.add(adapter);
        }
        return adapters;
    }

    private static LoraAdapter parseOne(final String value, final int id)
    {
        if (value.startsWith("{"))
        {
            final JsonNode node;
            try
            {
                node = JSON.readTree(value);
            }
            catch (final JsonProcessingException ex)
            {
                throw new IllegalArgumentException("--lora-modules: '" + value + "' is not valid JSON: " +
                    ex.getOriginalMessage());
            }
            final String name = text(node, "name", value);
            final String path = text(node, "path", value);
            if (null == name || null == path)
            {
                throw new IllegalArgumentException("--lora-modules: '" + value + "' needs \"name\" and \"path\"");
            }
            return new LoraAdapter(name, id, path, text(node, "base_model_name", value));
        }
        final int equals = value.indexOf('=');
        if (equals <= 0 || equals == value.length() - 1)
        {
            throw new IllegalArgumentException("--lora-modules: '" + value + "' is neither NAME=PATH nor a JSON " +
                "object {\"name\":...,\"path\":...}");
        }
        return new LoraAdapter(value.substring(0, equals), id, value.substring(equals + 1), null);
    }

    private static String text(final JsonNode node, final String field, final String value)
    {
        final JsonNode child = node.get(field);
        if (null == child || child.isNull())
        {
            return null;
        }
        if (!child.isTextual() || child.asText().isEmpty())
        {
            throw new IllegalArgumentException("--lora-modules: '" + value + "': \"" + field +
                "\" must be a non-empty string");
        }
        return child.asText();
    }
}
