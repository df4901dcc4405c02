package dev.tapedeck.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import picocli.CommandLine;

import dev.tapedeck.build.TapedeckVersion;
import dev.tapedeck.record.RecordContext;
import dev.tapedeck.record.RecordingTap;

/**
 * {@code tapedeck record}: a recording tap between a real vLLM frontend and a real vLLM engine core, writing a
 * vllm-vcr trace (docs/record.md). Runs until SIGINT/SIGTERM, then closes the trace and exits 0.
 */
@CommandLine.Command(
    name = "record",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Sit between a real vLLM frontend and a real vLLM engine core (vllm serve --headless), relay every " +
            "message byte for byte and record a trace: one record per finished request (arrival, TTFT, " +
            "inter-token gaps, batch context, cached tokens, finish reason). Stop with Ctrl-C or SIGTERM.",
        "Example: tapedeck record --trace-out capture.jsonl.gz --model Qwen/Qwen3-8B --gpu H200",
        "  engine:   vllm serve Qwen/Qwen3-8B --headless --data-parallel-size 1 --data-parallel-address 127.0.0.1 " +
            "--data-parallel-rpc-port 5580",
        "  frontend: vllm serve Qwen/Qwen3-8B --data-parallel-size 1 --data-parallel-size-local 0 " +
            "--data-parallel-address 127.0.0.1 --data-parallel-rpc-port 5570"})
public final class RecordCommand implements Callable<Integer>
{
    private static final long SHUTDOWN_WAIT_MS = 30_000;

    @CommandLine.Option(names = "--frontend-handshake", defaultValue = "tcp://127.0.0.1:5570",
        paramLabel = "ENDPOINT", description = "The real frontend's handshake address (its " +
            "--data-parallel-address and --data-parallel-rpc-port); the tap connects as engine 0 " +
            "(default: ${DEFAULT-VALUE}).")
    String frontendHandshake;

    @CommandLine.Option(names = "--engine-handshake", defaultValue = "tcp://127.0.0.1:5580", paramLabel = "ENDPOINT",
        description = "Where the tap listens for the real headless engine's handshake (the engine's " +
            "--data-parallel-address and --data-parallel-rpc-port; port 0 picks one) (default: ${DEFAULT-VALUE}).")
    String engineHandshake;

    @CommandLine.Option(names = "--input-address", defaultValue = "tcp://127.0.0.1:29560", paramLabel = "ENDPOINT",
        description = "Where the tap listens for the engine's input connection; sent to the engine in INIT, so it " +
            "must be reachable from the engine (default: ${DEFAULT-VALUE}).")
    String inputAddress;

    @CommandLine.Option(names = "--output-address", defaultValue = "tcp://127.0.0.1:29561", paramLabel = "ENDPOINT",
        description = "Where the tap listens for the engine's outputs; sent in INIT (default: ${DEFAULT-VALUE}).")
    String outputAddress;

    @CommandLine.Option(names = "--trace-out", required = true, paramLabel = "FILE",
        description = "The trace to write (JSONL; gzip when the name ends with .gz), one record per finished " +
            "request, flushed as it is written.")
    String traceOut;

    @CommandLine.Option(names = "--model", defaultValue = "", paramLabel = "NAME",
        description = "Meta model (omitted when empty).")
    String model;

    @CommandLine.Option(names = "--gpu", paramLabel = "NAME", description = "Meta gpu, e.g. H200; config-hash input.")
    String gpu;

    @CommandLine.Option(names = "--tp", paramLabel = "N", description = "Meta tp (tensor parallel size).")
    Long tp;

    @CommandLine.Option(names = "--config-hash", paramLabel = "HEX",
        description = "Meta config_hash as given, instead of the computed fingerprint (scheme v3 over --gpu, " +
            "--vllm-version or the engine's version, and --engine-config).")
    String configHash;

    @CommandLine.Option(names = "--vllm-version", paramLabel = "TAG",
        description = "The capture's vLLM tag, e.g. v0.23.0: the engine must report the same major.minor (else " +
            "the tap refuses); config-hash input; selects how outputs are read.")
    String vllmVersion;

    @CommandLine.Option(names = "--max-num-seqs", paramLabel = "N", description = "Meta max_num_seqs.")
    Long maxNumSeqs;

    @CommandLine.Option(names = "--engine-config", defaultValue = "", paramLabel = "TEXT",
        description = "Canonical engine configuration (key=value;... sorted by key), config-hash input.")
    String engineConfig;

    @CommandLine.Option(names = "--block-size", defaultValue = "16", paramLabel = "TOKENS",
        description = "Tokens per block of the block_hashes prompt fingerprints; meta block_size (default: " +
            "${DEFAULT-VALUE}).")
    int blockSize;

    @CommandLine.Option(names = "--record-tokens", arity = "0..1", defaultValue = "off", fallbackValue = "on",
        paramLabel = "on|off", converter = OnOff.class,
        description = "Record output_token_ids (content-bearing); a bare flag means on (default: ${DEFAULT-VALUE}).")
    boolean recordTokens;

    @CommandLine.Option(names = "--step-stats-out", paramLabel = "FILE",
        description = "Also write each output message's scheduler_stats, one JSON line per message (gzip when the " +
            "name ends with .gz). Needs engine stats (a frontend without --disable-log-stats).")
    String stepStatsOut;

    @CommandLine.Option(names = "--handshake-timeout", defaultValue = "60m", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "How long each side may take to come up and finish its handshake, model loading included " +
            "(default: ${DEFAULT-VALUE}).")
    long handshakeTimeoutNs;

    /** {@code on}/{@code off} (also true/false, yes/no). */
    static final class OnOff implements CommandLine.ITypeConverter<Boolean>
    {
        @Override
        public Boolean convert(final String value)
        {
            switch (value.trim().toLowerCase(Locale.ROOT))
            {
                case "on":
                case "true":
                case "yes":
                    return true;
                case "off":
                case "false":
                case "no":
                    return false;
                default:
                    throw new CommandLine.TypeConversionException("expected on or off, got '" + value + "'");
            }
        }
    }

    /**
     * @return the settings the flags describe.
     * @throws IllegalArgumentException if a path is not a local file.
     */
    RecordContext context()
    {
        return new RecordContext()
            .frontendHandshake(frontendHandshake)
            .engineHandshake(engineHandshake)
            .inputAddress(inputAddress)
            .outputAddress(outputAddress)
            .traceOut(localPath(traceOut, "--trace-out"))
            .stepStatsOut(null == stepStatsOut ? null : localPath(stepStatsOut, "--step-stats-out"))
            .model(model)
            .gpu(gpu)
            .tp(tp)
            .configHash(configHash)
            .vllmVersion(vllmVersion)
            .maxNumSeqs(maxNumSeqs)
            .engineConfig(engineConfig.isEmpty() ? null : engineConfig)
            .blockSize(blockSize)
            .recordTokens(recordTokens)
            .handshakeTimeoutNs(handshakeTimeoutNs);
    }

    @Override
    public Integer call() throws Exception
    {
        final RecordingTap tap = RecordingTap.start(context());
        System.err.println("tapedeck " + TapedeckVersion.version() + " record: engine handshake " +
            tap.engineHandshakeEndpoint() + ", input " + tap.inputEndpoint() + ", output " + tap.outputEndpoint() +
            "; frontend " + frontendHandshake + "; trace " + traceOut);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> onSignal(tap), "tapedeck-record-shutdown"));
        tap.awaitEnd(Long.MAX_VALUE);
        final Throwable failure = tap.failure();
        if (failure instanceof IllegalArgumentException || failure instanceof IOException)
        {
            throw (Exception)failure;
        }
        if (null != failure)
        {
            throw new IllegalStateException(failure.getMessage(), failure);
        }
        return 0;
    }

    /**
     * SIGINT/SIGTERM: stop relaying, close the trace (and its gzip trailer) and exit 0. When the tap failed (the
     * JVM exits with its error code), the hook leaves the exit code alone.
     */
    private static void onSignal(final RecordingTap tap)
    {
        if (null != tap.failure())
        {
            return;
        }
        System.err.println("tapedeck: stopping: closing the trace");
        tap.stop();
        try
        {
            if (!tap.awaitEnd(SHUTDOWN_WAIT_MS))
            {
                System.err.println("tapedeck: the tap did not stop within " +
                    TimeUnit.MILLISECONDS.toSeconds(SHUTDOWN_WAIT_MS) + " s");
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        System.err.println("tapedeck: recorded " + tap.recordsWritten() + " request(s)");
        System.err.flush();
        if (null == tap.failure())
        {
            // a signal is the normal way to end a capture: exit 0 rather than the JVM's 128 + signal
            Runtime.getRuntime().halt(0);
        }
    }

    private static Path localPath(final String value, final String flag)
    {
        if (value.contains("://"))
        {
            throw new IllegalArgumentException(flag + " " + value + ": only local files are supported (write " +
                "locally and upload afterwards)");
        }
        return Path.of(value);
    }
}
