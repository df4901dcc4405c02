package dev.tapedeck.lora;

import java.util.List;

/**
 * The LoRA flags of {@code serve}: whether adapters are accepted at all ({@code --enable-lora}), the adapters loaded
 * at start ({@code --lora-modules}, ids 1..K) and {@code --max-lora-rank} (reported, not simulated). The number of
 * distinct adapters one batch may hold, {@code --max-loras}, is an engine setting ({@code EngineConfig}). Immutable.
 *
 * @param enabled {@code --enable-lora}.
 * @param modules the adapters of {@code --lora-modules}, in order.
 * @param maxLoraRank {@code --max-lora-rank}.
 * @param maxCpuLoras {@code --max-cpu-loras}: how many adapters may be registered at once (modules and runtime
 *     loads); 0 for {@link #DEFAULT_MAX_ADAPTERS}.
 */
public record LoraSettings(boolean enabled, List<LoraAdapter> modules, int maxLoraRank, int maxCpuLoras)
{
    /** How many adapters may be registered without {@code --max-cpu-loras}: a bound on what clients can load. */
    public static final int DEFAULT_MAX_ADAPTERS = 1024;
    /** The longest adapter name accepted, in characters. */
    public static final int MAX_NAME_LENGTH = 256;

    /** vLLM's default {@code --max-lora-rank}. */
    public static final int DEFAULT_MAX_LORA_RANK = 16;

    /** LoRA off, as without {@code --enable-lora}. */
    public static final LoraSettings DISABLED = new LoraSettings(false, List.of(), DEFAULT_MAX_LORA_RANK, 0);

    /**
     * Validates and copies the list.
     */
    public LoraSettings
    {
        modules = List.copyOf(modules);
        if (!enabled && !modules.isEmpty())
        {
            throw new IllegalArgumentException("--lora-modules needs --enable-lora");
        }
        if (maxLoraRank < 1)
        {
            throw new IllegalArgumentException("--max-lora-rank must be >= 1, got " + maxLoraRank);
        }
        if (maxCpuLoras < 0)
        {
            throw new IllegalArgumentException("--max-cpu-loras must be >= 1, got " + maxCpuLoras);
        }
        if (modules.size() > maxAdapters(maxCpuLoras))
        {
            throw new IllegalArgumentException("--lora-modules lists " + modules.size() + " adapters, more than " +
                "--max-cpu-loras " + maxAdapters(maxCpuLoras));
        }
    }

    /**
     * @return how many adapters may be registered at once.
     */
    public int maxAdapters()
    {
        return maxAdapters(maxCpuLoras);
    }

    private static int maxAdapters(final int maxCpuLoras)
    {
        return 0 == maxCpuLoras ? DEFAULT_MAX_ADAPTERS : maxCpuLoras;
    }
}
