package dev.tapedeck.play;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochNanoClock;
import org.agrona.concurrent.SystemNanoClock;

import dev.tapedeck.capture.CaptureSettings;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.enginecore.PlayOptions;
import dev.tapedeck.fault.FaultSchedule;
import dev.tapedeck.kvevents.KvEventsSettings;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.tokens.Tokenizer;

/**
 * Everything {@link Play#start(PlayContext)} needs, in the Aeron style: fluent setters, getters of the same name, and
 * {@link #conclude()}, which checks every value and fills the defaults. Each default is named on its setter; they are
 * those of {@code tapedeck play}. The handshake address has no default.
 * <p>
 * Not thread safe: fill it on one thread, then hand it to {@code start}, after which it must not change.
 */
public final class PlayContext
{
    /** How long to wait for the frontend's INIT by default: 5 minutes. */
    public static final long DEFAULT_HANDSHAKE_TIMEOUT_NS = TimeUnit.MINUTES.toNanos(5);
    /** How long running requests may finish on SIGTERM by default: 10 s. */
    public static final long DEFAULT_SHUTDOWN_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    private String handshakeAddress;
    private int engineCount = 1;
    private VllmLine vllmLine = VllmLine.NEWEST;
    private long handshakeTimeoutNs = DEFAULT_HANDSHAKE_TIMEOUT_NS;
    private long shutdownTimeoutNs = DEFAULT_SHUTDOWN_TIMEOUT_NS;
    private EngineConfig engine = new EngineConfig();
    private Tokenizer tokenizer;
    private Path tokenizerFile;
    private KvEventsSettings kvEvents;
    private dev.tapedeck.kvtransfer.KvTransferSettings kvTransfer;
    private String kvTransferModel = "tapedeck-play";
    private CaptureSettings capture = CaptureSettings.OFF;
    private NanoClock nanoClock = SystemNanoClock.INSTANCE;
    private EpochNanoClock epochClock = SystemEpochNanoClock.INSTANCE;
    private FaultSchedule faults = FaultSchedule.NONE;

    /**
     * Check every value and fill the defaults. Called by {@link Play#start}; calling it again does nothing new.
     *
     * @return this.
     * @throws IllegalArgumentException naming the first invalid setting, in the words of its CLI flag.
     */
    public PlayContext conclude()
    {
        if (null == handshakeAddress)
        {
            throw new IllegalArgumentException("--handshake-address is required");
        }
        if (null != tokenizer && null != tokenizerFile)
        {
            throw new IllegalArgumentException("give a tokenizer or a tokenizer file, not both");
        }
        if (null == engine || null == capture || null == nanoClock || null == epochClock || null == vllmLine)
        {
            throw new IllegalArgumentException("engine, capture, nanoClock, epochClock and vllmLine must not be null");
        }
        if (null != engine.kvEventSink() && (null != kvEvents || engineCount > 1))
        {
            throw new IllegalArgumentException("an engine template's KV event sink serves one engine only; with " +
                "several engines, or with kvEvents settings, leave it unset");
        }
        if (null != kvTransfer && null != engine.kvOffload())
        {
            throw new IllegalArgumentException("one KV connector per engine: the CPU offloading tier and " +
                "prefill/decode disaggregation (vLLM's MultiConnector) are not modelled together");
        }
        if (handshakeTimeoutNs <= 0 || shutdownTimeoutNs < 0)
        {
            throw new IllegalArgumentException("--handshake-timeout must be positive and --shutdown-timeout not " +
                "negative");
        }
        playOptions(null);
        return this;
    }

    /**
     * @param tokenizerOrNull the tokenizer whose vocabulary random output draws from, or null for prompt tokens.
     * @return the engine-core face's settings (what {@link Play} gives each {@code EngineCoreAgent}; a test that drives
     *     an agent by hand with an {@code AgentInvoker} builds it from here).
     * @throws IllegalArgumentException if the address or the engine count is invalid.
     */
    public PlayOptions playOptions(final Tokenizer tokenizerOrNull)
    {
        return new PlayOptions(handshakeAddress, engineCount, vllmLine,
            null == tokenizerOrNull ? null : tokenizerOrNull.vocabulary(), handshakeTimeoutNs, shutdownTimeoutNs,
            nanoClock, faults);
    }

    /**
     * @param value the engine faults of {@code --fault-schedule}: {@code die}, {@code dead}, {@code stall} and
     *     {@code kv-events}, timed from each engine's handshake (default none).
     * @return this.
     */
    public PlayContext faults(final FaultSchedule value)
    {
        faults = null == value ? FaultSchedule.NONE : value;
        return this;
    }

    /**
     * @return the engine faults.
     */
    public FaultSchedule faults()
    {
        return faults;
    }

    /**
     * @param value the frontend's handshake ROUTER: {@code tcp://<data-parallel-address>:<data-parallel-rpc-port>}
     *     (required).
     * @return this.
     */
    public PlayContext handshakeAddress(final String value)
    {
        handshakeAddress = value;
        return this;
    }

    /**
     * @return the frontend's handshake address.
     */
    public String handshakeAddress()
    {
        return handshakeAddress;
    }

    /**
     * @param value engines, with identities 0..N-1, as the frontend's {@code --data-parallel-size} (default 1).
     * @return this.
     */
    public PlayContext engineCount(final int value)
    {
        engineCount = value;
        return this;
    }

    /**
     * @return engines.
     */
    public int engineCount()
    {
        return engineCount;
    }

    /**
     * @param value the frontend's vLLM line, its wire dialect (default the newest confirmed, 0.28).
     * @return this.
     */
    public PlayContext vllmLine(final VllmLine value)
    {
        vllmLine = value;
        return this;
    }

    /**
     * @return the frontend's vLLM line.
     */
    public VllmLine vllmLine()
    {
        return vllmLine;
    }

    /**
     * @param value how long to wait for the frontend's INIT (default 5 minutes).
     * @return this.
     */
    public PlayContext handshakeTimeoutNs(final long value)
    {
        handshakeTimeoutNs = value;
        return this;
    }

    /**
     * @return how long to wait for the frontend's INIT.
     */
    public long handshakeTimeoutNs()
    {
        return handshakeTimeoutNs;
    }

    /**
     * @param value how long running requests may finish on SIGTERM (default 10 s).
     * @return this.
     */
    public PlayContext shutdownTimeoutNs(final long value)
    {
        shutdownTimeoutNs = value;
        return this;
    }

    /**
     * @return how long running requests may finish on SIGTERM.
     */
    public long shutdownTimeoutNs()
    {
        return shutdownTimeoutNs;
    }

    /**
     * @param value the template every engine's configuration is copied from; engine i gets seed + i (default:
     *     {@code new EngineConfig()}).
     * @return this.
     */
    public PlayContext engine(final EngineConfig value)
    {
        engine = value;
        return this;
    }

    /**
     * @return the engines' template configuration.
     */
    public EngineConfig engine()
    {
        return engine;
    }

    /**
     * @param value a tokenizer the caller owns, whose vocabulary random output tokens come from (default none: output
     *     tokens are drawn from each request's own prompt, always valid ids for the frontend's tokenizer).
     * @return this.
     */
    public PlayContext tokenizer(final Tokenizer value)
    {
        tokenizer = value;
        return this;
    }

    /**
     * @return the caller's tokenizer, or null.
     */
    public Tokenizer tokenizer()
    {
        return tokenizer;
    }

    /**
     * @param value a Hugging Face {@code tokenizer.json} that play loads and owns (default none).
     * @return this.
     */
    public PlayContext tokenizerFile(final Path value)
    {
        tokenizerFile = value;
        return this;
    }

    /**
     * @return the tokenizer file, or null.
     */
    public Path tokenizerFile()
    {
        return tokenizerFile;
    }

    /**
     * @param value KV event publishing of engine 0; engine i publishes on the endpoints offset by i with
     *     data-parallel rank i, as vLLM's ranks do; null for none (default null).
     * @return this.
     */
    public PlayContext kvEvents(final KvEventsSettings value)
    {
        kvEvents = value;
        return this;
    }

    /**
     * @return KV event settings of engine 0, or null.
     */
    public KvEventsSettings kvEvents()
    {
        return kvEvents;
    }

    /**
     * @param value prefill/decode disaggregation: every engine gets a NIXL connector (engine i is data-parallel rank
     *     i: engine id {@code <id>_dp<i>}, side-channel port plus i); null for none (default null).
     * @param model the model name the handshake's compatibility hash covers (a play engine does not know the
     *     frontend's model; peers must agree on it, or disable the check with {@code enforce_handshake_compat}).
     * @return this.
     */
    public PlayContext kvTransfer(final dev.tapedeck.kvtransfer.KvTransferSettings value, final String model)
    {
        kvTransfer = value;
        kvTransferModel = model;
        return this;
    }

    /**
     * @return the KV transfer settings, or null.
     */
    public dev.tapedeck.kvtransfer.KvTransferSettings kvTransfer()
    {
        return kvTransfer;
    }

    /**
     * @return the model name of the handshake's compatibility hash.
     */
    public String kvTransferModel()
    {
        return kvTransferModel;
    }

    /**
     * @param value self-capture of every finished request to a trace file (default off).
     * @return this.
     */
    public PlayContext capture(final CaptureSettings value)
    {
        capture = value;
        return this;
    }

    /**
     * @return self-capture settings.
     */
    public CaptureSettings capture()
    {
        return capture;
    }

    /**
     * @param value the engines' clock: steps, arrivals, output timestamps, the capture's start (default
     *     {@link System#nanoTime()}). A test may pass a clock it advances by hand and run the agents with an
     *     {@code AgentInvoker}.
     * @return this.
     */
    public PlayContext nanoClock(final NanoClock value)
    {
        nanoClock = value;
        return this;
    }

    /**
     * @return the engines' clock.
     */
    public NanoClock nanoClock()
    {
        return nanoClock;
    }

    /**
     * @param value the wall clock KV event batches are dated by (default the system's).
     * @return this.
     */
    public PlayContext epochClock(final EpochNanoClock value)
    {
        epochClock = value;
        return this;
    }

    /**
     * @return the wall clock KV event batches are dated by.
     */
    public EpochNanoClock epochClock()
    {
        return epochClock;
    }
}
