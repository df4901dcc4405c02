package dev.tapedeck.http;

import java.util.List;

import dev.tapedeck.lora.LoraSettings;
import dev.tapedeck.net.Transport;
import dev.tapedeck.tokens.ChatTemplate;

/**
 * Settings of the HTTP face (the engine's own settings are in {@code EngineConfig}). Immutable.
 *
 * @param host address to bind.
 * @param port first port; instance i listens on port + i (0 picks free ports).
 * @param instances independent replicas.
 * @param model the model path or id ({@code root} in /v1/models).
 * @param servedModelNames names clients may use; the first is reported in responses and metrics.
 * @param mode random tokens or echo of the prompt.
 * @param chatTemplate how chat messages become prompt text.
 * @param maxRequestBodyBytes largest accepted body; larger gets 413.
 * @param shutdownTimeoutNs how long SIGTERM waits for in-flight requests before aborting them.
 * @param enablePromptTokensDetails add {@code prompt_tokens_details.cached_tokens} to usage (vLLM flag).
 * @param vllmVersion version reported by {@code /version}.
 * @param apiKey when set, {@code /v1} requests need {@code Authorization: Bearer <key>}.
 * @param socketSendBufferBytes SO_SNDBUF of accepted connections, 0 for the OS default.
 * @param transport Netty I/O transport.
 * @param lora LoRA adapters ({@code --enable-lora}, {@code --lora-modules}).
 */
public record ServeOptions(
    String host,
    int port,
    int instances,
    String model,
    List<String> servedModelNames,
    Mode mode,
    ChatTemplate chatTemplate,
    int maxRequestBodyBytes,
    long shutdownTimeoutNs,
    boolean enablePromptTokensDetails,
    String vllmVersion,
    String apiKey,
    int socketSendBufferBytes,
    Transport transport,
    LoraSettings lora)
{
    /** Where output tokens come from. */
    public enum Mode
    {
        /** Random text-like tokens of the tokenizer's vocabulary. */
        RANDOM,
        /** The prompt's own tokens (chat: the last message), then stop. */
        ECHO
    }

    /**
     * Options without LoRA.
     */
    public ServeOptions(final String host, final int port, final int instances, final String model,
        final List<String> servedModelNames, final Mode mode, final ChatTemplate chatTemplate,
        final int maxRequestBodyBytes, final long shutdownTimeoutNs, final boolean enablePromptTokensDetails,
        final String vllmVersion, final String apiKey, final int socketSendBufferBytes, final Transport transport)
    {
        this(host, port, instances, model, servedModelNames, mode, chatTemplate, maxRequestBodyBytes,
            shutdownTimeoutNs, enablePromptTokensDetails, vllmVersion, apiKey, socketSendBufferBytes, transport,
            LoraSettings.DISABLED);
    }

    /**
     * Validates and copies the list.
     */
    public ServeOptions
    {
        lora = null == lora ? LoraSettings.DISABLED : lora;
        servedModelNames = List.copyOf(servedModelNames);
        if (servedModelNames.isEmpty())
        {
            throw new IllegalArgumentException("at least one served model name is required");
        }
        if (instances < 1)
        {
            throw new IllegalArgumentException("--instances must be >= 1");
        }
        if (port < 0 || port + instances - 1 > 65535)
        {
            throw new IllegalArgumentException("--port must leave room for " + instances + " ports below 65536");
        }
        if (socketSendBufferBytes < 0)
        {
            throw new IllegalArgumentException("--socket-send-buffer must not be negative");
        }
        if (maxRequestBodyBytes < 1024)
        {
            throw new IllegalArgumentException("--max-request-body-size must be at least 1 KiB");
        }
    }

    /**
     * @return the name responses and metrics report.
     */
    public String modelNameForResponses()
    {
        return servedModelNames.get(0);
    }

    /**
     * @param name a model name from a request.
     * @return true if clients may use it.
     */
    public boolean serves(final String name)
    {
        return servedModelNames.contains(name);
    }
}
