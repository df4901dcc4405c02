package dev.tapedeck.face;

import dev.tapedeck.capture.TraceRecorder;
import dev.tapedeck.kvevents.KvEventPublishers;
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
    private final java.util.List<NixlConnector> kvConnectors = new java.util.ArrayList<>();

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
     * @param connector an engine's NIXL connector, closed with the rest.
     */
    public void kvConnector(final NixlConnector connector)
    {
        kvConnectors.add(connector);
    }

    /**
     * @return the NIXL connectors, in engine order.
     */
    public java.util.List<NixlConnector> kvConnectors()
    {
        return java.util.List.copyOf(kvConnectors);
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
