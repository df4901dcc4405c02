package dev.tapedeck.http;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.lora.LoraTable;
import dev.tapedeck.metrics.LoraRequestsInfo;
import dev.tapedeck.metrics.PrometheusExposition;
import dev.tapedeck.tokens.Tokenizer;

/**
 * One simulated vLLM replica: its engine, the event loop it lives on, its metrics and its listening port.
 * Everything here is confined to {@link #loop()} once started.
 */
final class Instance
{
    private final int index;
    private final EventLoop loop;
    private final ServeOptions options;
    private final Tokenizer tokenizer;
    private final HttpFront front;
    private final Engine engine;
    private final PrometheusExposition exposition;
    private final SeededRandom idRandom;
    private final LoraTable loras;
    private Channel serverChannel;

    Instance(final int index, final EventLoop loop, final ServeOptions options, final EngineConfig config,
        final Tokenizer tokenizer)
    {
        this.index = index;
        this.loop = loop;
        this.options = options;
        this.tokenizer = tokenizer;
        this.front = new HttpFront(loop, options, tokenizer.vocabulary());
        this.engine = new Engine(config, front, System.nanoTime());
        this.front.engine(engine);
        this.idRandom = new SeededRandom(SeededRandom.mix(config.seed(), 0x1d5L));
        final double startEpochSeconds = System.currentTimeMillis() / 1000.0;
        this.exposition = new PrometheusExposition(options.modelNameForResponses(),
            startEpochSeconds, List.of(engine), List.of(cacheConfigLabels(config)));
        this.loras = new LoraTable(options.lora().modules());
        if (options.lora().enabled())
        {
            exposition.loraRequestsInfo(new LoraRequestsInfo(config.maxLoras(), startEpochSeconds));
        }
    }

    private static Map<String, String> cacheConfigLabels(final EngineConfig config)
    {
        final Map<String, String> labels = new TreeMap<>();
        labels.put("block_size", Integer.toString(config.blockSize()));
        labels.put("cache_dtype", "auto");
        labels.put("enable_prefix_caching", config.enablePrefixCaching() ? "True" : "False");
        labels.put("gpu_memory_utilization", "0.9");
        labels.put("is_attention_free", "False");
        labels.put("num_cpu_blocks", "None");
        labels.put("num_gpu_blocks", Integer.toString(config.kvCacheBlocks()));
        labels.put("num_gpu_blocks_override", "None");
        labels.put("prefix_caching_hash_algo", "sha256_cbor");
        labels.put("sliding_window", "None");
        return labels;
    }

    int index()
    {
        return index;
    }

    EventLoop loop()
    {
        return loop;
    }

    ServeOptions options()
    {
        return options;
    }

    Tokenizer tokenizer()
    {
        return tokenizer;
    }

    HttpFront front()
    {
        return front;
    }

    Engine engine()
    {
        return engine;
    }

    PrometheusExposition exposition()
    {
        return exposition;
    }

    /**
     * @return the LoRA adapters this replica serves (its own table: loads and unloads are per replica).
     */
    LoraTable loras()
    {
        return loras;
    }

    /**
     * @return 32 lowercase hex digits, as vLLM's {@code random_uuid()}; from the instance's seed.
     */
    String randomHexId()
    {
        final StringBuilder hex = new StringBuilder(32);
        appendHex(hex, idRandom.nextLong());
        appendHex(hex, idRandom.nextLong());
        return hex.toString();
    }

    private static void appendHex(final StringBuilder out, final long value)
    {
        final String digits = Long.toHexString(value);
        for (int i = digits.length(); i < 16; i++)
        {
            out.append('0');
        }
        out.append(digits);
    }

    /**
     * tapedeck's own counters (not vLLM's): tokens written, batches, and token-emission lateness, in JSON.
     *
     * @param reset clear the lateness histogram after reading it (to measure a window).
     * @return the JSON text.
     */
    String statsJson(final boolean reset)
    {
        final org.HdrHistogram.Histogram lateness = front.emissionLatenessNs();
        final String json = "{\"instance\":" + index + ",\"tokens\":" + front.tokensEmitted() +
            ",\"batches\":" + front.batches() + ",\"steps\":" + engine.stepCount() +
            ",\"running\":" + engine.numRunning() + ",\"waiting\":" + engine.numWaiting() +
            ",\"emission_lateness_us\":{\"count\":" + lateness.getTotalCount() +
            ",\"p50\":" + micros(lateness.getValueAtPercentile(50)) +
            ",\"p90\":" + micros(lateness.getValueAtPercentile(90)) +
            ",\"p99\":" + micros(lateness.getValueAtPercentile(99)) +
            ",\"p999\":" + micros(lateness.getValueAtPercentile(99.9)) +
            ",\"max\":" + micros(lateness.getMaxValue()) + "}}";
        if (reset)
        {
            lateness.reset();
        }
        return json;
    }

    private static String micros(final long ns)
    {
        return Long.toString(ns / 1000);
    }

    void serverChannel(final Channel channel)
    {
        serverChannel = channel;
    }

    Channel serverChannel()
    {
        return serverChannel;
    }

    int boundPort()
    {
        return ((java.net.InetSocketAddress)serverChannel.localAddress()).getPort();
    }
}
