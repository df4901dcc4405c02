package dev.tapedeck.lora;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.agrona.collections.Int2ObjectHashMap;

/**
 * The adapters a server or an engine knows, by name and by id, in the order they were loaded. A frontend loads by
 * name ({@code --lora-modules}, {@code /v1/load_lora_adapter}) and numbers new adapters after the highest id it ever
 * gave, never reusing one (as vLLM's frontend does); an engine core registers the ids its frontend chose
 * ({@code add_lora}, or an ADD request's {@code lora_request}).
 * <p>
 * <b>Not thread safe</b>: one table per {@code serve} instance (its event loop) or per {@code play} engine (its agent
 * thread).
 */
public final class LoraTable
{
    private final Map<String, LoraAdapter> byName = new LinkedHashMap<>();
    private final Int2ObjectHashMap<LoraAdapter> byId = new Int2ObjectHashMap<>();
    private int highestId;

    /**
     * @param initial adapters loaded at start, with distinct names and ids.
     */
    public LoraTable(final List<LoraAdapter> initial)
    {
        for (final LoraAdapter adapter : initial)
        {
            register(adapter);
        }
    }

    /**
     * @param name a model name from a request.
     * @return the adapter of that name, or null.
     */
    public LoraAdapter byName(final String name)
    {
        return byName.get(name);
    }

    /**
     * @param id an adapter id.
     * @return the adapter with that id, or null.
     */
    public LoraAdapter byId(final int id)
    {
        return byId.get(id);
    }

    /**
     * @return the adapters in the order they were loaded.
     */
    public List<LoraAdapter> adapters()
    {
        return new ArrayList<>(byName.values());
    }

    /**
     * @return the ids of the adapters, in load order.
     */
    public int[] ids()
    {
        return byName.values().stream().mapToInt(LoraAdapter::id).toArray();
    }

    /**
     * Load a new adapter by name (a frontend's runtime load); it gets the next id.
     *
     * @param name its name, not yet loaded.
     * @param path where it comes from.
     * @return the new adapter.
     * @throws IllegalStateException when an adapter of that name is loaded.
     */
    public LoraAdapter load(final String name, final String path)
    {
        if (byName.containsKey(name))
        {
            throw new IllegalStateException("LoRA adapter " + name + " is already loaded");
        }
        return register(new LoraAdapter(name, highestId + 1, path, null));
    }

    /**
     * Forget an adapter by name; requests already running with it go on.
     *
     * @param name its name.
     * @return the adapter removed, or null if none had that name.
     */
    public LoraAdapter unload(final String name)
    {
        final LoraAdapter removed = byName.remove(name);
        if (null != removed)
        {
            byId.remove(removed.id());
        }
        return removed;
    }

    /**
     * Forget an adapter by id (an engine's {@code remove_lora}).
     *
     * @param id its id.
     * @return true if it was known.
     */
    public boolean remove(final int id)
    {
        final LoraAdapter removed = byId.remove(id);
        if (null != removed)
        {
            byName.remove(removed.name());
        }
        return null != removed;
    }

    /**
     * The adapter with the id and name a frontend sent, registering it (or its new name) when it is new to this
     * table: an engine loads an adapter when the first request for it arrives, as vLLM's workers do.
     *
     * @param id its id.
     * @param name its name.
     * @param path its path, or null.
     * @return the adapter.
     */
    public LoraAdapter resolve(final int id, final String name, final String path)
    {
        final LoraAdapter known = byId.get(id);
        if (null != known && known.name().equals(name))
        {
            return known;
        }
        return register(new LoraAdapter(name, id, path, null));
    }

    /**
     * Add an adapter, replacing any with the same id or the same name.
     *
     * @param adapter the adapter.
     * @return it.
     */
    public LoraAdapter register(final LoraAdapter adapter)
    {
        final LoraAdapter sameId = byId.remove(adapter.id());
        if (null != sameId)
        {
            byName.remove(sameId.name());
        }
        final LoraAdapter sameName = byName.remove(adapter.name());
        if (null != sameName)
        {
            byId.remove(sameName.id());
        }
        byName.put(adapter.name(), adapter);
        byId.put(adapter.id(), adapter);
        highestId = Math.max(highestId, adapter.id());
        return adapter;
    }
}
