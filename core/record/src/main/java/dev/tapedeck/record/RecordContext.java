package dev.tapedeck.record;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * Everything {@link RecordingTap#start(RecordContext)} needs (docs/record.md), in the Aeron style: fluent setters,
 * getters of the same name (each returns what its setter set), and {@link #conclude()}, which checks every value.
 * Each default is named on its setter; they are those of {@code tapedeck record}, except the bound addresses: free
 * ports of 127.0.0.1 (for embedding) where the CLI uses fixed ports.
 * <p>
 * Not thread safe: fill it on one thread, then hand it to {@code start}, after which it must not change.
 */
public final class RecordContext
{
    /** How long each side may take to come up and complete its handshake, by default: 5 minutes. */
    public static final long DEFAULT_HANDSHAKE_TIMEOUT_NS = TimeUnit.MINUTES.toNanos(5);

    private String frontendHandshake;
    private String engineHandshake = "tcp://127.0.0.1:0";
    private String inputAddress = "tcp://127.0.0.1:0";
    private String outputAddress = "tcp://127.0.0.1:0";
    private Path traceOut;
    private Path stepStatsOut;
    private String model;
    private String gpu;
    private Long tp;
    private String configHash;
    private String vllmVersion;
    private Long maxNumSeqs;
    private String engineConfig;
    private int blockSize = 16;
    private boolean recordTokens = false;
    private long handshakeTimeoutNs = DEFAULT_HANDSHAKE_TIMEOUT_NS;
    private NanoClock nanoClock = SystemNanoClock.INSTANCE;
    /**
     * Check every value. Called by {@link RecordingTap#start}; calling it again does nothing new.
     *
     * @return this.
     * @throws IllegalArgumentException naming the first invalid setting, in the words of its CLI flag.
     */
    public RecordContext conclude()
    {
        tcpOnly(frontendHandshake, "--frontend-handshake");
        tcpOnly(engineHandshake, "--engine-handshake");
        connectable(tcpOnly(inputAddress, "--input-address"), "--input-address");
        connectable(tcpOnly(outputAddress, "--output-address"), "--output-address");
        if (null == traceOut)
        {
            throw new IllegalArgumentException("--trace-out is required");
        }
        if (blockSize < 0)
        {
            throw new IllegalArgumentException("--block-size must be 0 (no block_hashes) or more, got " + blockSize);
        }
        if (handshakeTimeoutNs <= 0)
        {
            throw new IllegalArgumentException("--handshake-timeout must be positive");
        }
        if (null == nanoClock)
        {
            throw new IllegalArgumentException("nanoClock must not be null");
        }
        return this;
    }

    private static String tcpOnly(final String address, final String flag)
    {
        if (null == address || !address.startsWith("tcp://"))
        {
            throw new IllegalArgumentException(flag + " must be a ZeroMQ TCP endpoint such as tcp://127.0.0.1:5580, " +
                "got '" + address + "'" + (null != address && address.startsWith("ipc://") ?
                " (JeroMQ cannot reach libzmq's Unix-domain ipc:// sockets)" : ""));
        }
        return address;
    }

    private static void connectable(final String address, final String flag)
    {
        if (address.startsWith("tcp://*") || address.startsWith("tcp://0.0.0.0") || address.startsWith("tcp://[::]"))
        {
            throw new IllegalArgumentException(flag + " " + address + " is sent to the engine in INIT, which " +
                "connects to it: give an address the engine can reach (e.g. tcp://10.0.0.5:29560), not a wildcard");
        }
    }

    /**
     * @param value the real frontend's handshake ROUTER, which the tap connects to as engine 0 (required; a tcp://
     *     endpoint).
     * @return this.
     */
    public RecordContext frontendHandshake(final String value)
    {
        frontendHandshake = value;
        return this;
    }

    public String frontendHandshake()
    {
        return frontendHandshake;
    }

    /**
     * @param value where the tap binds the handshake ROUTER the real engine connects to (default tcp://127.0.0.1:0, a
     *     free port).
     * @return this.
     */
    public RecordContext engineHandshake(final String value)
    {
        engineHandshake = value;
        return this;
    }

    public String engineHandshake()
    {
        return engineHandshake;
    }

    /**
     * @param value where the tap binds the ROUTER the engine takes requests from; INIT names it, so not a wildcard
     *     (default tcp://127.0.0.1:0).
     * @return this.
     */
    public RecordContext inputAddress(final String value)
    {
        inputAddress = value;
        return this;
    }

    public String inputAddress()
    {
        return inputAddress;
    }

    /**
     * @param value where the tap binds the PULL the engine sends outputs to; INIT names it, so not a wildcard (default
     *     tcp://127.0.0.1:0).
     * @return this.
     */
    public RecordContext outputAddress(final String value)
    {
        outputAddress = value;
        return this;
    }

    public String outputAddress()
    {
        return outputAddress;
    }

    /**
     * @param value the trace file, gzip when it ends with {@code .gz} (required).
     * @return this.
     */
    public RecordContext traceOut(final Path value)
    {
        traceOut = value;
        return this;
    }

    public Path traceOut()
    {
        return traceOut;
    }

    /**
     * @param value the step-stats sidecar (default none).
     * @return this.
     */
    public RecordContext stepStatsOut(final Path value)
    {
        stepStatsOut = value;
        return this;
    }

    public Path stepStatsOut()
    {
        return stepStatsOut;
    }

    /**
     * @param value meta {@code model} (default none).
     * @return this.
     */
    public RecordContext model(final String value)
    {
        model = value;
        return this;
    }

    public String model()
    {
        return model;
    }

    /**
     * @param value meta {@code gpu} and config-hash input (default none).
     * @return this.
     */
    public RecordContext gpu(final String value)
    {
        gpu = value;
        return this;
    }

    public String gpu()
    {
        return gpu;
    }

    /**
     * @param value meta {@code tp} (default none).
     * @return this.
     */
    public RecordContext tp(final Long value)
    {
        tp = value;
        return this;
    }

    public Long tp()
    {
        return tp;
    }

    /**
     * @param value meta {@code config_hash} as given (default: computed from the GPU, the vLLM tag and the engine
     *     configuration).
     * @return this.
     */
    public RecordContext configHash(final String value)
    {
        configHash = value;
        return this;
    }

    public String configHash()
    {
        return configHash;
    }

    /**
     * @param value the capture's vLLM tag: version guard and config-hash input (default: what the engine reports).
     * @return this.
     */
    public RecordContext vllmVersion(final String value)
    {
        vllmVersion = value;
        return this;
    }

    public String vllmVersion()
    {
        return vllmVersion;
    }

    /**
     * @param value meta {@code max_num_seqs} (default none).
     * @return this.
     */
    public RecordContext maxNumSeqs(final Long value)
    {
        maxNumSeqs = value;
        return this;
    }

    public Long maxNumSeqs()
    {
        return maxNumSeqs;
    }

    /**
     * @param value canonical engine configuration, config-hash input (default none).
     * @return this.
     */
    public RecordContext engineConfig(final String value)
    {
        engineConfig = value;
        return this;
    }

    public String engineConfig()
    {
        return engineConfig;
    }

    /**
     * @param value tokens per block of the {@code block_hashes} fingerprints, 0 for none (default 16).
     * @return this.
     */
    public RecordContext blockSize(final int value)
    {
        blockSize = value;
        return this;
    }

    public int blockSize()
    {
        return blockSize;
    }

    /**
     * @param value keep output token ids (default false).
     * @return this.
     */
    public RecordContext recordTokens(final boolean value)
    {
        recordTokens = value;
        return this;
    }

    public boolean recordTokens()
    {
        return recordTokens;
    }

    /**
     * @param value how long each side may take to come up and complete its handshake (default 5 minutes).
     * @return this.
     */
    public RecordContext handshakeTimeoutNs(final long value)
    {
        handshakeTimeoutNs = value;
        return this;
    }

    public long handshakeTimeoutNs()
    {
        return handshakeTimeoutNs;
    }

    /**
     * @param value the clock observations are timed by (default {@link System#nanoTime()}).
     * @return this.
     */
    public RecordContext nanoClock(final NanoClock value)
    {
        nanoClock = value;
        return this;
    }

    public NanoClock nanoClock()
    {
        return nanoClock;
    }
}
