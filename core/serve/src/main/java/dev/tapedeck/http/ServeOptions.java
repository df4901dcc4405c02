package dev.tapedeck.http;

import java.util.List;

import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochNanoClock;
import org.agrona.concurrent.SystemNanoClock;

import dev.tapedeck.fault.FaultSettings;
import dev.tapedeck.lora.LoraSettings;
import dev.tapedeck.net.Transport;
import dev.tapedeck.tokens.PromptTemplate;

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
 * @param nanoClock the face's clock: every time it reads (arrivals, steps, writes, aborts); the event loop's timers
 *     schedule the steps, so it must advance as they do ({@link System#nanoTime()} on a real loop, the loop's
 *     {@code MockTicker} on an {@code EmbeddedChannel}).
 * @param epochClock the wall clock of {@code created} fields and {@code process_start_time_seconds}.
 * @param connectionLimits timeouts of idle and slow connections, and the connection cap.
 * @param faults fault injection ({@link FaultSettings#NONE} for none).
 * @param enableSleepMode vLLM's {@code --enable-sleep-mode}: {@code /sleep}, {@code /wake_up}, {@code /is_sleeping}.
 * @param startupDurationNs llm-d-inference-sim's {@code --startup-duration}: nothing is answered before it passed
 *     but {@code /health/ready} (503).
 * @param dataParallelRank {@code --data-parallel-rank}: this process is that rank of a fleet with one rank per pod
 *     (its metrics' {@code engine} label), or -1.
 * @param tls HTTPS ({@link TlsSettings#NONE} for plain HTTP).
 * @param podName the pod's name ({@code POD_NAME}, as llm-d-inference-sim reads it): completions answer with
 *     {@code x-inference-pod} and {@code x-inference-port}; null for none.
 * @param podNamespace the pod's namespace ({@code POD_NAMESPACE}): {@code x-inference-namespace}; null for none.
 * @param api response headers, embedding sizes, tool calls and log-probabilities ({@link ApiSurface#DEFAULT} when
 *     null).
 */
public record ServeOptions(
    String host,
    int port,
    int instances,
    String model,
    List<String> servedModelNames,
    Mode mode,
    PromptTemplate chatTemplate,
    int maxRequestBodyBytes,
    long shutdownTimeoutNs,
    boolean enablePromptTokensDetails,
    String vllmVersion,
    String apiKey,
    int socketSendBufferBytes,
    Transport transport,
    LoraSettings lora,
    NanoClock nanoClock,
    EpochNanoClock epochClock,
    ConnectionLimits connectionLimits,
    FaultSettings faults,
    boolean enableSleepMode,
    long startupDurationNs,
    int dataParallelRank,
    TlsSettings tls,
    String podName,
    String podNamespace,
    ApiSurface api)
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
     * Validates and copies the list.
     */
    public ServeOptions
    {
        lora = null == lora ? LoraSettings.DISABLED : lora;
        nanoClock = null == nanoClock ? SystemNanoClock.INSTANCE : nanoClock;
        epochClock = null == epochClock ? SystemEpochNanoClock.INSTANCE : epochClock;
        connectionLimits = null == connectionLimits ? ConnectionLimits.NONE : connectionLimits;
        faults = null == faults ? FaultSettings.NONE : faults;
        api = null == api ? ApiSurface.DEFAULT : api;
        tls = null == tls ? TlsSettings.NONE : tls;
        if (startupDurationNs < 0)
        {
            throw new IllegalArgumentException("--startup-duration must not be negative");
        }
        faults.schedule().requireOnly(java.util.EnumSet.complementOf(java.util.EnumSet.of(
            dev.tapedeck.fault.FaultSchedule.Action.DIE, dev.tapedeck.fault.FaultSchedule.Action.DEAD)),
            "serve ('die' and 'dead' are engine-core faults, for play)");
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
     * @return the wall clock in whole seconds, for {@code created} fields.
     */
    public long epochSeconds()
    {
        return epochClock.nanoTime() / 1_000_000_000L;
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
