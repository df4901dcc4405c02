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
 */
public record LoraSettings(boolean enabled, List<LoraAdapter> modules, int maxLoraRank)
{
    /** vLLM's default {@code --max-lora-rank}. */
    public static final int DEFAULT_MAX_LORA_RANK = 16;

    /** LoRA off, as without {@code --enable-lora}. */
    public static final LoraSettings DISABLED = new LoraSettings(false, List.of(), DEFAULT_MAX_LORA_RANK);

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
    }
}
