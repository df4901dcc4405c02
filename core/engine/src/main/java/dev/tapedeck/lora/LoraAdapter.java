package dev.tapedeck.lora;

import java.nio.charset.StandardCharsets;

/**
 * One LoRA adapter as vLLM names it: the name clients put in {@code model}, the integer id the engine knows it by
 * (vLLM's {@code lora_int_id}, 1 and up), the path it was loaded from and, optionally, the base model it belongs to.
 * There are no weights: an adapter changes which prefix-cache blocks a request can share, what KV events say and how
 * many distinct adapters one batch may hold ({@code --max-loras}), nothing else.
 * <p>
 * Immutable and thread safe.
 */
public final class LoraAdapter
{
    private final String name;
    private final int id;
    private final String path;
    private final String baseModelName;
    private final byte[] nameUtf8;

    /**
     * @param name the adapter's name ({@code lora_name}).
     * @param id its integer id ({@code lora_int_id}), at least 1.
     * @param path where it was loaded from ({@code lora_path}); empty when unknown.
     * @param baseModelName the base model it was trained for, or null for the served model.
     */
    public LoraAdapter(final String name, final int id, final String path, final String baseModelName)
    {
        if (null == name || name.isEmpty())
        {
            throw new IllegalArgumentException("a LoRA adapter needs a name");
        }
        if (id < 1)
        {
            throw new IllegalArgumentException("LoRA adapter " + name + ": its id must be >= 1, got " + id);
        }
        this.name = name;
        this.id = id;
        this.path = null == path ? "" : path;
        this.baseModelName = baseModelName;
        this.nameUtf8 = name.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @return the adapter's name.
     */
    public String name()
    {
        return name;
    }

    /**
     * @return its integer id (vLLM's {@code lora_int_id}).
     */
    public int id()
    {
        return id;
    }

    /**
     * @return where it was loaded from, empty when unknown.
     */
    public String path()
    {
        return path;
    }

    /**
     * @return the base model it belongs to, or null for the served model.
     */
    public String baseModelName()
    {
        return baseModelName;
    }

    /**
     * @return the name's UTF-8 bytes (shared: do not modify).
     */
    public byte[] nameUtf8()
    {
        return nameUtf8;
    }

    @Override
    public String toString()
    {
        return name + "#" + id + (path.isEmpty() ? "" : "=" + path);
    }
}
