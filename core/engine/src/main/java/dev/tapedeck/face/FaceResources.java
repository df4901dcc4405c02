package dev.tapedeck.face;

import java.util.ArrayList;
import java.util.List;

import dev.tapedeck.capture.TraceRecorder;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.kvevents.KvEventPublishers;
import dev.tapedeck.kvtransfer.KvTransferSettings;
import dev.tapedeck.kvtransfer.NixlConnector;
import dev.tapedeck.tokens.Tokenizer;

/**
 * What a face of the engine ({@code serve}, {@code play}) owns beside its engines and its transport: the KV event
 * publishers, the NIXL connectors (data planes and side channels), the self-capture recorder, and the tokenizer when
 * the face opened it. {@link #close()} closes them in that order; a face calls it after it stopped its engines, so
 * the last steps' events and records go out.
 * <p>
 * Not thread safe: filled while the face starts, closed once, from one thread.
 */
public final class FaceResources implements AutoCloseable
{
    private final KvEventPublishers publishers = new KvEventPublishers();
    private final Tokenizer tokenizer;
    private final boolean ownsTokenizer;
    private TraceRecorder recorder;
    private final List<NixlConnector> kvConnectors = new ArrayList<>();

    /**
     * @param tokenizer the face's tokenizer, or null when it has none.
     * @param ownsTokenizer true when the face opened it (it is closed with the rest), false when the caller owns it.
     */
    public FaceResources(final Tokenizer tokenizer, final boolean ownsTokenizer)
    {
        this.tokenizer = tokenizer;
        this.ownsTokenizer = ownsTokenizer;
    }

    /**
     * @return the publishers, one per engine that publishes (none when KV events are off).
     */
    public KvEventPublishers publishers()
    {
        return publishers;
    }

    /**
     * @return the tokenizer, or null.
     */
    public Tokenizer tokenizer()
    {
        return tokenizer;
    }

    /**
     * Start an engine's NIXL connector (its data plane and side channel), give it to the engine's configuration and
     * close it with the rest.
     *
     * @param settings the face's KV transfer settings.
     * @param engineIndex the engine's index in the process (its data-parallel rank).
     * @param config the engine's configuration, not yet concluded.
     * @param vllmVersion the vLLM version the face reports (part of the handshake's compatibility hash).
     * @param model the model name of the compatibility hash.
     */
    public void startKvConnector(final KvTransferSettings settings, final int engineIndex, final EngineConfig config,
        final String vllmVersion, final String model)
    {
        final NixlConnector connector = NixlConnector.start(settings, engineIndex, config.kvCacheBlocks(),
            config.blockSize(), vllmVersion, model);
        kvConnectors.add(connector);
        config.kvConnector(connector);
    }

    /**
     * @param value the self-capture recorder, or null when no trace file is set.
     */
    public void recorder(final TraceRecorder value)
    {
        recorder = value;
    }

    /**
     * @return the self-capture recorder, or null.
     */
    public TraceRecorder recorder()
    {
        return recorder;
    }

    /**
     * Stop the publishers (sending what the engines staged), close the trace and, if the face opened it, the tokenizer.
     */
    @Override
    public void close()
    {
        publishers.close();
        for (final NixlConnector connector : kvConnectors)
        {
            connector.close();
        }
        if (null != recorder)
        {
            recorder.close();
        }
        if (ownsTokenizer && null != tokenizer)
        {
            tokenizer.close();
        }
    }
}
