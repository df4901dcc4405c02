package dev.tapedeck.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import picocli.CommandLine;

/**
 * The flags of llm-d-inference-sim and of {@code vllm serve} that {@code serve} takes so that their deployments start
 * unchanged. Those with a meaning here act ({@code --max-request-body-size-mb}, {@code --data-parallel-rank},
 * {@code --enable-request-id-headers}; the others that name a tapedeck concept are aliases on its own flags, e.g.
 * {@code --enable-kvcache}, {@code --zmq-endpoint}, {@code --hash-seed}); the rest are accepted, recorded and named
 * once at start-up as having no effect in a simulator ({@link #noEffect}).
 */
final class CompatOptions
{
    /** The flags this class accepts without effect, as {@link #noEffect} names them. */
    private static final List<String> NO_EFFECT_FLAGS = List.of("--log-http", "--mm-encoder-only", "--omni",
        "--image-emission-rate", "--time-to-generate-image", "--time-to-generate-image-std-dev",
        "--event-batch-size", "--max-tool-call-integer-param",
        "--min-tool-call-integer-param", "--max-tool-call-number-param",
        "--min-tool-call-number-param", "--max-tool-call-array-param-length", "--min-tool-call-array-param-length",
        "--tool-call-not-required-param-probability", "--object-tool-call-not-required-field-probability",
        "--tool-call-extra-call-probability", "--skip-tool-validation", "--dataset-path", "--dataset-url",
        "--dataset-in-memory", "--dataset-table-name", "--render-url", "--render-timeout", "--mm-render-timeout",
        "--force-dummy-tokenizer", "--mm-processor-kwargs",
        "--ec-transfer-config", "--kv-cache-transfer-latency-std-dev", "--kv-cache-transfer-time-std-dev", "--v",
        "--enforce-eager", "--dtype", "--trust-remote-code", "--disable-log-requests", "--disable-log-stats",
        "--uvicorn-log-level", "--pipeline-parallel-size", "--swap-space", "--quantization", "--load-format",
        "--download-dir", "--distributed-executor-backend", "--compilation-config", "--generation-config",
        "--disable-custom-all-reduce", "--max-seq-len-to-capture", "--revision", "--tokenizer-mode",
        "--enable-auto-tool-choice");

    @CommandLine.Option(names = "--config", paramLabel = "FILE",
        description = "A YAML file of flags, keys named as the flags without '--' (llm-d-inference-sim's and " +
            "vllm serve's --config); flags on the command line override it.")
    Path config;

    @CommandLine.Option(names = "--max-request-body-size-mb", paramLabel = "MB",
        description = "llm-d-inference-sim's flag: --max-request-body-size in MiB.")
    Integer maxRequestBodySizeMb;

    @CommandLine.Option(names = "--data-parallel-rank", paramLabel = "N",
        description = "This pod is data-parallel rank N of a fleet with one rank per pod (llm-d's layout): its " +
            "metrics say engine=\"N\" and its KV events carry rank N on the events port + N; the HTTP port is not " +
            "offset. Takes the place of --data-parallel-size.")
    Integer dataParallelRank;

    @CommandLine.Option(names = "--default-embedding-dimensions", paramLabel = "N", defaultValue = "384",
        description = "Size of /v1/embeddings vectors when a request names none (llm-d-inference-sim's flag; " +
            "default: ${DEFAULT-VALUE}).")
    int embeddingDimensions;

    @CommandLine.Option(names = "--auto-tool-call-rate", paramLabel = "P", defaultValue = "1.0",
        description = "How often tool_choice auto calls a tool, 0 to 1 (after a tool's result the model answers in " +
            "text; default: ${DEFAULT-VALUE}).")
    double autoToolCallRate;

    @CommandLine.Option(names = "--tool-call-parser", paramLabel = "NAME", defaultValue = "hermes",
        description = "vLLM's flag: how an auto tool call is written in the model's text: hermes " +
            "(<tool_call>{..}</tool_call>) or llama3_json ({\"name\": .., \"parameters\": {..}}); default: " +
            "${DEFAULT-VALUE}.")
    String toolCallParser;

    @CommandLine.Option(names = "--global-cache-hit-threshold", paramLabel = "RATE", defaultValue = "0",
        description = "llm-d-inference-sim's flag: a request whose prefix-cache hit rate is below RATE (0 to 1) " +
            "finishes at once with finish_reason cache_threshold, unless it gives its own cache_hit_threshold " +
            "(default: ${DEFAULT-VALUE}, none).")
    double globalCacheHitThreshold;

    @CommandLine.Option(names = "--fake-metrics", paramLabel = "JSON",
        description = "llm-d-inference-sim's flag: /metrics reports these values instead of the engines' " +
            "(running-requests, waiting-requests, kv-cache-usage as numbers or \"oscillate|ramp|rampreset|" +
            "squarewave:start:end:period\", loras, per-bucket histogram counts, counters; docs/metrics.md).")
    String fakeMetrics;

    @CommandLine.Option(names = "--fake-metrics-refresh-interval", paramLabel = "DURATION", defaultValue = "100ms",
        converter = Converters.DurationNs.class,
        description = "How often function-valued --fake-metrics gauges change (default: ${DEFAULT-VALUE}).")
    long fakeMetricsRefreshNs;

    @CommandLine.Option(names = "--show-hidden-metrics-for-version", paramLabel = "X.Y",
        description = "vLLM's flag: export again the metrics the previous minor version (of --vllm-version) " +
            "deprecated, e.g. 0.11 on a 0.12 line brings back vllm:time_per_output_token_seconds.")
    String showHiddenMetricsForVersion;

    @CommandLine.Option(names = "--max-logprobs", paramLabel = "N", defaultValue = "20",
        description = "vLLM's flag: the most logprobs, top_logprobs or prompt_logprobs a request may ask for, -1 " +
            "for the vocabulary (default: ${DEFAULT-VALUE}).")
    int maxLogprobs;

    @CommandLine.Option(names = "--enable-request-id-headers",
        description = "Echo the request's X-Request-Id header on the response (llm-d-inference-sim's flag); " +
            "response ids take it either way, as vLLM's.")
    boolean requestIdHeaders;

    @CommandLine.Option(names = "--ssl-certfile", paramLabel = "FILE",
        description = "Serve HTTPS with this PEM certificate chain (with --ssl-keyfile; vLLM's and " +
            "llm-d-inference-sim's flag).")
    Path sslCertFile;

    @CommandLine.Option(names = "--ssl-keyfile", paramLabel = "FILE",
        description = "The PEM (PKCS#8) private key of --ssl-certfile.")
    Path sslKeyFile;

    @CommandLine.Option(names = "--self-signed-certs",
        description = "Serve HTTPS with a certificate for localhost made at start (llm-d-inference-sim's flag).")
    boolean selfSignedCerts;

    @CommandLine.Option(names = {"--log-http", "--mm-encoder-only", "--omni", "--skip-tool-validation",
        "--dataset-in-memory", "--force-dummy-tokenizer", "--enforce-eager", "--trust-remote-code",
        "--disable-log-requests", "--disable-log-stats", "--disable-custom-all-reduce", "--enable-auto-tool-choice"},
        negatable = true,
        hidden = true)
    List<Boolean> switches;

    @CommandLine.Option(names = {"--image-emission-rate", "--time-to-generate-image",
        "--time-to-generate-image-std-dev", "--event-batch-size",
        "--max-tool-call-integer-param", "--min-tool-call-integer-param", "--max-tool-call-number-param",
        "--min-tool-call-number-param", "--max-tool-call-array-param-length", "--min-tool-call-array-param-length",
        "--tool-call-not-required-param-probability", "--object-tool-call-not-required-field-probability",
        "--tool-call-extra-call-probability", "--dataset-path", "--dataset-url", "--dataset-table-name",
        "--render-url", "--render-timeout", "--mm-render-timeout", "--mm-processor-kwargs", "--ec-transfer-config",
        "--kv-cache-transfer-latency-std-dev",
        "--kv-cache-transfer-time-std-dev", "--v", "--dtype", "--uvicorn-log-level", "--pipeline-parallel-size",
        "--swap-space", "--quantization", "--load-format", "--download-dir", "--distributed-executor-backend",
        "--compilation-config", "--generation-config", "--max-seq-len-to-capture", "--revision", "--tokenizer-mode"},
        paramLabel = "VALUE", hidden = true)
    List<String> values;

    /**
     * @return what the API answers beyond timing, from these flags.
     */
    dev.tapedeck.http.ApiSurface api()
    {
        return new dev.tapedeck.http.ApiSurface(requestIdHeaders, embeddingDimensions, autoToolCallRate, maxLogprobs,
            dev.tapedeck.structured.ToolCalling.Parser.of(toolCallParser), globalCacheHitThreshold, fakeMetrics,
            fakeMetricsRefreshNs, showHiddenMetricsForVersion);
    }

    /**
     * @return the HTTPS settings the TLS flags describe.
     * @throws IllegalArgumentException when certificate and key are not given together, or with a self-signed one.
     */
    dev.tapedeck.http.TlsSettings tls()
    {
        return new dev.tapedeck.http.TlsSettings(sslCertFile, sslKeyFile, selfSignedCerts);
    }

    /**
     * @param defaultBytes {@code --max-request-body-size} as given or defaulted.
     * @return the body limit: {@code --max-request-body-size-mb} when given (1 to 512, llm-d's range).
     */
    int maxRequestBodyBytes(final int defaultBytes)
    {
        if (null == maxRequestBodySizeMb)
        {
            return defaultBytes;
        }
        if (maxRequestBodySizeMb < 1 || maxRequestBodySizeMb > 512)
        {
            throw new IllegalArgumentException("--max-request-body-size-mb must be 1 to 512, got " +
                maxRequestBodySizeMb);
        }
        return maxRequestBodySizeMb << 20;
    }

    /**
     * @param given the parse result of the command.
     * @return the flags given that have no effect here and their values, keyed as vLLM's engine configuration names
     *     them ({@code --tensor-parallel-size 2} is {@code tensor_parallel_size=2}, a switch {@code true}), for the
     *     configuration fingerprint of a capture.
     */
    static java.util.Map<String, Object> noEffectSettings(final CommandLine.ParseResult given)
    {
        final java.util.Map<String, Object> settings = new java.util.TreeMap<>();
        final List<String> args = given.originalArgs();
        for (int i = 0; i < args.size(); i++)
        {
            final String arg = args.get(i);
            final int equals = arg.indexOf('=');
            final String flag = equals > 0 ? arg.substring(0, equals) : arg;
            final boolean negated = flag.startsWith("--no-");
            final String name = negated ? "--" + flag.substring(5) : flag;
            if (!NO_EFFECT_FLAGS.contains(name))
            {
                continue;
            }
            final String key = name.substring(2).replace('-', '_');
            final boolean isSwitch = null != given.commandSpec().findOption(name) &&
                given.commandSpec().findOption(name).typeInfo().isBoolean();
            if (isSwitch || negated)
            {
                settings.put(key, !negated);
            }
            else
            {
                settings.put(key, equals > 0 ? arg.substring(equals + 1) : i + 1 < args.size() ? args.get(++i) : "");
            }
        }
        return settings;
    }

    /**
     * @param given the parse result of the command.
     * @return the flags given that have no effect here, in the order of {@link #NO_EFFECT_FLAGS}.
     */
    static List<String> noEffect(final CommandLine.ParseResult given)
    {
        final List<String> args = given.originalArgs();
        final List<String> named = new ArrayList<>();
        for (final String flag : NO_EFFECT_FLAGS)
        {
            if (isGiven(args, flag))
            {
                named.add(flag);
            }
        }
        return named;
    }

    /** Options sharing one field match together: tell which name the command line used. */
    private static boolean isGiven(final List<String> args, final String flag)
    {
        final String negated = "--no-" + flag.substring(2);
        for (final String arg : args)
        {
            if (arg.equals(flag) || arg.startsWith(flag + "=") || arg.equals(negated))
            {
                return true;
            }
        }
        return false;
    }
}
