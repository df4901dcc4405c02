package dev.tapedeck.simulate;

import java.nio.file.Path;
import java.util.List;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.kv.BlockHashAlgo;
import dev.tapedeck.load.Slo;
import dev.tapedeck.load.WorkloadReplay;
import dev.tapedeck.tokens.Tokenizer;

/**
 * What {@link Simulate#run} runs: a workload (the flags {@code load} takes for one, with the same names and meaning),
 * the engine's template (the flags {@code serve} takes), an optional sweep over one engine setting, and where the
 * predictions go. Aeron style: fluent setters, getters of the same name, {@link #conclude()} checks everything.
 * <p>
 * Not thread safe: filled on one thread, then read by the run.
 */
public final class SimulateContext
{
    /**
     * The levels {@code --sweep} can vary: engine settings by their flag names, and {@code users} (concurrent users
     * replaying the workload's sessions, {@link dev.tapedeck.workload.Workload#withUsers}).
     */
    public static final List<String> SWEEP_PARAMETERS = List.of("max-num-seqs", "max-num-batched-tokens",
        "kv-cache-size", "long-prefill-token-threshold", "users");
    /** The server modes {@code --sweep offload=...} compares: a CPU KV tier, none, and no prefix caching at all. */
    public static final List<String> OFFLOAD_MODES = List.of("on", "off", "noprefix");

    private Path workload;
    private String format = "auto";
    private double timeScale = 1.0;
    private int maxRequests;
    private double maxSeconds;
    private String outputTokens;
    private boolean ignoreEos;
    private boolean inferSessions = true;
    private long seed;
    private Slo slo = Slo.NONE;
    private EngineConfig engine = new EngineConfig();
    private BlockHashAlgo prefixCachingHashAlgo = BlockHashAlgo.XXHASH_CBOR;
    private Tokenizer tokenizer;
    private String model = "Qwen/Qwen3-8B";
    private String sweepParameter;
    private List<Integer> sweepValues = List.of();
    private List<String> offloadModes = List.of();
    private WorkloadReplay replay = WorkloadReplay.NONE;
    private boolean sizeContextToWorkload;
    private int gpusPerEngine = 1;
    private Path traceOut;
    private Path report;
    private Path html;

    /**
     * Check every setting.
     *
     * @return this.
     * @throws IllegalArgumentException naming the setting that is wrong.
     */
    public SimulateContext conclude()
    {
        if (null == workload)
        {
            throw new IllegalArgumentException("simulate needs a workload (--workload FILE)");
        }
        if (!(timeScale > 0) || maxRequests < 0 || maxSeconds < 0)
        {
            throw new IllegalArgumentException("--time-scale must be > 0, --max-requests and --max-seconds >= 0");
        }
        if (null != sweepParameter)
        {
            if (!SWEEP_PARAMETERS.contains(sweepParameter))
            {
                throw new IllegalArgumentException("--sweep varies one of " + SWEEP_PARAMETERS + ", got '" +
                    sweepParameter + "'");
            }
            if (sweepValues.isEmpty())
            {
                throw new IllegalArgumentException("--sweep " + sweepParameter + " needs values");
            }
            if ("users".equals(sweepParameter) && sweepValues.stream().anyMatch(v -> v < 1))
            {
                throw new IllegalArgumentException("--sweep users takes counts >= 1, got " + sweepValues);
            }
            if (null != traceOut)
            {
                throw new IllegalArgumentException("--trace-out writes one run's predictions: give it without --sweep");
            }
        }
        if (!offloadModes.isEmpty() && null != traceOut)
        {
            throw new IllegalArgumentException("--trace-out writes one run's predictions: give it without --sweep");
        }
        if (offloadModes.contains("on") && null != engine && null == engine.kvOffload())
        {
            throw new IllegalArgumentException("--sweep offload=on needs the CPU tier's size: " +
                "--kv-offloading-size GIB");
        }
        replay.checkAgainstSweep(sweepParameter);
        if (null == engine || null == slo || null == model || null == prefixCachingHashAlgo)
        {
            throw new IllegalArgumentException("engine, slo, model and prefix-caching hash algo must not be null");
        }
        return this;
    }

    /**
     * Parse {@code --sweep NAME=V1,V2,...}.
     *
     * @param spec the flag's value.
     * @return this.
     * @throws IllegalArgumentException for a malformed value.
     */
    public SimulateContext sweep(final String spec)
    {
        final int eq = spec.indexOf('=');
        if (eq <= 0)
        {
            throw new IllegalArgumentException("--sweep expects NAME=V1,V2,... (NAME one of " + SWEEP_PARAMETERS +
                " or offload), got '" + spec + "'");
        }
        if ("offload".equals(spec.substring(0, eq).trim()))
        {
            final List<String> modes = new java.util.ArrayList<>();
            for (final String mode : spec.substring(eq + 1).split(","))
            {
                if (!OFFLOAD_MODES.contains(mode.trim()) || modes.contains(mode.trim()))
                {
                    throw new IllegalArgumentException("--sweep offload takes distinct modes of " + OFFLOAD_MODES +
                        ", got '" + mode.trim() + "'");
                }
                modes.add(mode.trim());
            }
            offloadModes = List.copyOf(modes);
            return this;
        }
        if (null != sweepParameter)
        {
            throw new IllegalArgumentException("--sweep varies one level (" + sweepParameter + " already) and " +
                "optionally the offload mode");
        }
        final List<Integer> values = new java.util.ArrayList<>();
        for (final String value : spec.substring(eq + 1).split(","))
        {
            try
            {
                values.add(Integer.parseInt(value.trim()));
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("--sweep values are whole numbers, got '" + value + "'");
            }
        }
        sweepParameter = spec.substring(0, eq).trim();
        sweepValues = List.copyOf(values);
        return this;
    }

    /**
     * @param value the workload file (every format {@code load} reads).
     * @return this.
     */
    public SimulateContext workload(final Path value)
    {
        workload = value;
        return this;
    }

    /**
     * @return the workload file.
     */
    public Path workload()
    {
        return workload;
    }

    /**
     * @param value the workload's format, or {@code auto} (default).
     * @return this.
     */
    public SimulateContext format(final String value)
    {
        format = value;
        return this;
    }

    /**
     * @return the workload's format.
     */
    public String format()
    {
        return format;
    }

    /**
     * @param value multiplier on every arrival gap and think time (default 1).
     * @return this.
     */
    public SimulateContext timeScale(final double value)
    {
        timeScale = value;
        return this;
    }

    /**
     * @return the time scale.
     */
    public double timeScale()
    {
        return timeScale;
    }

    /**
     * @param value keep the first N requests (0, the default, for all).
     * @return this.
     */
    public SimulateContext maxRequests(final int value)
    {
        maxRequests = value;
        return this;
    }

    /**
     * @return the request limit.
     */
    public int maxRequests()
    {
        return maxRequests;
    }

    /**
     * @param value keep requests arriving within this many (scaled) seconds (0, the default, for all).
     * @return this.
     */
    public SimulateContext maxSeconds(final double value)
    {
        maxSeconds = value;
        return this;
    }

    /**
     * @return the time limit in seconds.
     */
    public double maxSeconds()
    {
        return maxSeconds;
    }

    /**
     * @param value a length distribution for every request's output ({@code load}'s {@code --output-tokens}), or
     *     null to keep the workload's (default).
     * @return this.
     */
    public SimulateContext outputTokens(final String value)
    {
        outputTokens = value;
        return this;
    }

    /**
     * @return the output length override, or null.
     */
    public String outputTokens()
    {
        return outputTokens;
    }

    /**
     * @param value true to generate exactly the requested output lengths ({@code ignore_eos}).
     * @return this.
     */
    public SimulateContext ignoreEos(final boolean value)
    {
        ignoreEos = value;
        return this;
    }

    /**
     * @return whether outputs ignore EOS.
     */
    public boolean ignoreEos()
    {
        return ignoreEos;
    }

    /**
     * @param value true (default) to infer sessions and multi-turn follow-ups, as {@code load --sessions auto}.
     * @return this.
     */
    public SimulateContext inferSessions(final boolean value)
    {
        inferSessions = value;
        return this;
    }

    /**
     * @return whether sessions are inferred.
     */
    public boolean inferSessions()
    {
        return inferSessions;
    }

    /**
     * @param value the seed of the workload's draws and prompts (the engine's is its template's).
     * @return this.
     */
    public SimulateContext seed(final long value)
    {
        seed = value;
        return this;
    }

    /**
     * @return the seed.
     */
    public long seed()
    {
        return seed;
    }

    /**
     * @param value objectives for goodput (default none).
     * @return this.
     */
    public SimulateContext slo(final Slo value)
    {
        slo = value;
        return this;
    }

    /**
     * @return the objectives.
     */
    public Slo slo()
    {
        return slo;
    }

    /**
     * @param value the engines' template (serve's engine flags), not concluded.
     * @return this.
     */
    public SimulateContext engine(final EngineConfig value)
    {
        engine = value;
        return this;
    }

    /**
     * @return the engines' template.
     */
    public EngineConfig engine()
    {
        return engine;
    }

    /**
     * The engines' block hash function, which replaces the template's. Default {@code xxhash_cbor}, not serve's
     * {@code sha256_cbor}: a simulation publishes no KV events and writes no engine block hash (the
     * {@code block_hashes} of {@code --trace-out} are the trace's own FNV fingerprints), and every decision of the
     * engine depends only on whether two block hashes are equal, never on their values. Two blocks have equal
     * hashes under either function exactly when their chains (parent, tokens, extra keys) are equal, barring a
     * 64-bit collision, so both functions give the same hits, evictions, steps and predictions, and XXH3 costs a
     * fraction of SHA-256.
     *
     * @param value the hash function ({@code --prefix-caching-hash-algo}).
     * @return this.
     */
    public SimulateContext prefixCachingHashAlgo(final BlockHashAlgo value)
    {
        prefixCachingHashAlgo = value;
        return this;
    }

    /**
     * @return the engines' block hash function.
     */
    public BlockHashAlgo prefixCachingHashAlgo()
    {
        return prefixCachingHashAlgo;
    }

    /**
     * @param value the tokenizer whose single-token words make the prompts (default: the built-in o200k).
     * @return this.
     */
    public SimulateContext tokenizer(final Tokenizer value)
    {
        tokenizer = value;
        return this;
    }

    /**
     * @return the tokenizer, or null for the built-in one.
     */
    public Tokenizer tokenizer()
    {
        return tokenizer;
    }

    /**
     * @param value the model name the report and the trace name.
     * @return this.
     */
    public SimulateContext model(final String value)
    {
        model = value;
        return this;
    }

    /**
     * @return the model name.
     */
    public String model()
    {
        return model;
    }

    /**
     * @return the swept engine setting, or null.
     */
    public String sweepParameter()
    {
        return sweepParameter;
    }

    /**
     * @return the swept values (empty without a sweep).
     */
    public List<Integer> sweepValues()
    {
        return sweepValues;
    }

    /**
     * @param value true to raise the engine's {@code max_model_len} to the workload's longest request (prompt plus
     *     output) when the template's is shorter: {@code --max-model-len} was not given, and the server the
     *     simulation stands for is sized for its workload, as a benchmark's is.
     * @return this.
     */
    public SimulateContext sizeContextToWorkload(final boolean value)
    {
        sizeContextToWorkload = value;
        return this;
    }

    /**
     * @return true when the engine's context length follows the workload's longest request.
     */
    public boolean sizeContextToWorkload()
    {
        return sizeContextToWorkload;
    }

    /**
     * @return the offload modes swept ({@link #OFFLOAD_MODES}), empty without that sweep.
     */
    public List<String> offloadModes()
    {
        return offloadModes;
    }

    /**
     * @param value how the workload is replayed: by concurrent users ({@code --users}, {@code --users-ramp}), on a
     *     fixed schedule ({@code --fixed-schedule} and its offsets); default as it is.
     * @return this.
     */
    public SimulateContext replay(final WorkloadReplay value)
    {
        replay = value;
        return this;
    }

    /**
     * @return how the workload is replayed ({@link WorkloadReplay#NONE} for as it is).
     */
    public WorkloadReplay replay()
    {
        return replay;
    }

    /**
     * @param value the GPUs the simulated engine stands for (its tensor-parallel size; default 1): the report's
     *     {@code target.gpus_per_server}, by which a sweep's throughput is given per GPU.
     * @return this.
     * @throws IllegalArgumentException when below 1.
     */
    public SimulateContext gpusPerEngine(final int value)
    {
        if (value < 1)
        {
            throw new IllegalArgumentException("GPUs per engine must be >= 1, got " + value);
        }
        gpusPerEngine = value;
        return this;
    }

    /**
     * @return the GPUs the simulated engine stands for.
     */
    public int gpusPerEngine()
    {
        return gpusPerEngine;
    }

    /**
     * @param value where to write per-request predictions in the trace schema, or null.
     * @return this.
     */
    public SimulateContext traceOut(final Path value)
    {
        traceOut = value;
        return this;
    }

    /**
     * @return the predictions' trace file, or null.
     */
    public Path traceOut()
    {
        return traceOut;
    }

    /**
     * @param value where to write the JSON report ({@code load}'s schema), or null.
     * @return this.
     */
    public SimulateContext report(final Path value)
    {
        report = value;
        return this;
    }

    /**
     * @return the JSON report's file, or null.
     */
    public Path report()
    {
        return report;
    }

    /**
     * @param value where to write the HTML report, or null.
     * @return this.
     */
    public SimulateContext html(final Path value)
    {
        html = value;
        return this;
    }

    /**
     * @return the HTML report's file, or null.
     */
    public Path html()
    {
        return html;
    }
}
