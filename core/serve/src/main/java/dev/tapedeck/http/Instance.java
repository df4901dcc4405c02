package dev.tapedeck.http;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.fault.FaultSchedule;
import dev.tapedeck.kvevents.KvEventStager;
import dev.tapedeck.kvtransfer.NixlConnector;
import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.lora.LoraTable;
import dev.tapedeck.metrics.LoraRequestsInfo;
import dev.tapedeck.metrics.NixlMetrics;
import dev.tapedeck.metrics.PrometheusExposition;
import dev.tapedeck.tokens.Tokenizer;

/**
 * One simulated vLLM server: the event loop it lives on, its listening port, and its data-parallel ranks, each an
 * engine with its own KV cache and scheduler behind the one port (as {@code vllm serve --data-parallel-size N}: one
 * API server, N engine cores). A request goes to the rank its {@code X-data-parallel-rank} header names, otherwise to
 * the least loaded rank. Everything here is confined to {@link #loop()} once started.
 */
final class Instance
{
    /** The request header that pins a request to a data-parallel rank (vLLM's name). */
    static final String DATA_PARALLEL_RANK_HEADER = "X-data-parallel-rank";
    private static final System.Logger LOG = System.getLogger(Instance.class.getName());

    private final int index;
    private final EventLoop loop;
    private final ServeOptions options;
    private final Tokenizer tokenizer;
    private final HttpFront[] ranks;
    private final PrometheusExposition exposition;
    private final SeededRandom idRandom;
    private final LoraTable loras;
    private final List<EngineConfig> rankConfigs;
    private final FaultInjector faults;
    private final Lifecycle lifecycle;
    /** This instance's connections, so that a {@code down} fault can reset them. */
    private final ChannelGroup connections;
    /** The periodic timeout check of this instance's connections. */
    private final ConnectionGuard.Sweep connectionSweep;
    private Channel serverChannel;
    private ServerBootstrap bootstrap;
    private InetSocketAddress boundAddress;
    private boolean down;

    Instance(final int index, final EventLoop loop, final ServeOptions options, final List<EngineConfig> rankConfigs,
        final Tokenizer tokenizer)
    {
        if (rankConfigs.isEmpty())
        {
            throw new IllegalArgumentException("an instance needs at least one engine");
        }
        this.index = index;
        this.loop = loop;
        this.options = options;
        this.tokenizer = tokenizer;
        this.ranks = new HttpFront[rankConfigs.size()];
        this.rankConfigs = List.copyOf(rankConfigs);
        this.connections = new DefaultChannelGroup("instance-" + index, loop);
        this.connectionSweep = new ConnectionGuard.Sweep(loop, options.connectionLimits());
        final List<Engine> engines = new ArrayList<>(ranks.length);
        final List<Map<String, String>> labels = new ArrayList<>(ranks.length);
        final long nowNs = options.nanoClock().nanoTime();
        for (int r = 0; r < ranks.length; r++)
        {
            final HttpFront front = new HttpFront(loop, options, tokenizer.vocabulary());
            final Engine engine = new Engine(rankConfigs.get(r), front, nowNs);
            front.engine(engine);
            ranks[r] = front;
            engines.add(engine);
            labels.add(cacheConfigLabels(rankConfigs.get(r)));
        }
        final List<NixlMetrics> nixlMetrics = new ArrayList<>(ranks.length);
        for (int r = 0; r < ranks.length; r++)
        {
            if (rankConfigs.get(r).kvConnector() instanceof NixlConnector)
            {
                final NixlConnector connector = (NixlConnector)rankConfigs.get(r).kvConnector();
                final Runnable kick = ranks[r]::kick;
                connector.wakeUpWith(() -> loop.execute(kick));
                nixlMetrics.add(connector.metrics());
            }
        }
        this.idRandom = new SeededRandom(SeededRandom.mix(rankConfigs.get(0).seed(), 0x1d5L));
        this.faults = new FaultInjector(this, options.faults(), rankConfigs.get(0).seed());
        this.lifecycle = new Lifecycle(this, options.enableSleepMode(), options.startupDurationNs());
        final double startEpochSeconds = options.epochClock().nanoTime() / 1e9;
        final dev.tapedeck.metrics.FakeMetrics fake = null == options.api().fakeMetrics() ? null :
            dev.tapedeck.metrics.FakeMetrics.parse(options.api().fakeMetrics(), rankConfigs.get(0).maxModelLen(),
                options.api().fakeMetricsRefreshNs(), options.nanoClock()::nanoTime);
        // llm-d's --fake-metrics: the set values take the place of every rank's
        this.exposition = new PrometheusExposition(options.modelNameForResponses(), startEpochSeconds,
            null == fake ? engines : java.util.Collections.nCopies(engines.size(), fake), labels);
        exposition.sleepState(lifecycle::sleepStateCode).firstEngineIndex(Math.max(0, options.dataParallelRank()))
            .deprecatedMetrics(dev.tapedeck.metrics.DeprecatedMetrics.of(options.vllmVersion(),
                options.api().showHiddenMetricsForVersion()));
        this.loras = new LoraTable(options.lora().modules());
        if (nixlMetrics.size() == ranks.length)
        {
            exposition.nixlMetrics(nixlMetrics);
        }
        if (options.lora().enabled() || (null != fake && fake.hasLoras()))
        {
            exposition.loraRequestsInfo(new LoraRequestsInfo(rankConfigs.get(0).maxLoras(), startEpochSeconds,
                nowNs));
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
        labels.put("prefix_caching_hash_algo", config.prefixCachingHashAlgo().vllmName());
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

    /**
     * @return the periodic timeout check of this instance's connections.
     */
    ConnectionGuard.Sweep connectionSweep()
    {
        return connectionSweep;
    }

    ServeOptions options()
    {
        return options;
    }

    Tokenizer tokenizer()
    {
        return tokenizer;
    }

    /**
     * @return the current time on the engines' clock, in nanoseconds.
     */
    long nowNs()
    {
        return options.nanoClock().nanoTime();
    }

    /**
     * @return the number of data-parallel ranks (engines) behind this instance's port.
     */
    int dataParallelSize()
    {
        return ranks.length;
    }

    /**
     * @param rank data-parallel rank.
     * @return the rank's front (which holds its engine).
     */
    HttpFront rank(final int rank)
    {
        return ranks[rank];
    }

    /**
     * @return rank 0's engine; every rank has the same configuration apart from its seed.
     */
    Engine firstEngine()
    {
        return ranks[0].engine();
    }

    /**
     * Choose the rank of a new request: the one its {@code X-data-parallel-rank} header names, or else the least
     * loaded, scored as vLLM's data-parallel load balancer scores engines (4 x waiting + running; ties go to the
     * lowest rank).
     *
     * @param rankHeader the header's value, or null.
     * @return the rank's front.
     * @throws ApiException (400) if the header is not a rank of this server.
     */
    HttpFront route(final String rankHeader)
    {
        if (null != rankHeader)
        {
            int rank;
            try
            {
                rank = Integer.parseInt(rankHeader.trim());
                // one rank per process (--data-parallel-rank N): N is this process's only rank
                rank = rank == options.dataParallelRank() ? 0 : options.dataParallelRank() >= 0 ? -1 : rank;
            }
            catch (final NumberFormatException ex)
            {
                throw ApiException.badRequest(DATA_PARALLEL_RANK_HEADER + " must be an integer, got '" + rankHeader +
                    "'", null);
            }
            if (rank < 0 || rank >= ranks.length)
            {
                throw ApiException.badRequest("Requested DP rank " + rank + " is out of range [0, " + ranks.length +
                    ")", null);
            }
            return ranks[rank];
        }
        HttpFront best = ranks[0];
        long bestScore = Long.MAX_VALUE;
        for (final HttpFront front : ranks)
        {
            final Engine engine = front.engine();
            final long score = 4L * engine.numWaiting() + engine.numRunning();
            if (score < bestScore)
            {
                bestScore = score;
                best = front;
            }
        }
        return best;
    }

    /**
     * @return requests running or waiting over all ranks.
     */
    int requestsInFlight()
    {
        int total = 0;
        for (final HttpFront front : ranks)
        {
            total += front.engine().numRunning() + front.engine().numWaiting();
        }
        return total;
    }

    /**
     * Stop every rank from taking requests (new ones get 503).
     */
    void beginShutdown()
    {
        for (final HttpFront front : ranks)
        {
            front.engine().beginShutdown();
        }
    }

    /**
     * Abort whatever is still in flight on every rank and write the aborts out.
     */
    void abortAll()
    {
        for (final HttpFront front : ranks)
        {
            front.engine().abortAll(front.nowNs());
            front.kick();
        }
    }

    /**
     * vLLM's {@code POST /reset_prefix_cache}: every rank forgets its cached prefix blocks (and publishes
     * {@code AllBlocksCleared}). A rank with running requests keeps its cache and logs why, as vLLM does; the endpoint
     * answers 200 either way, as vLLM's.
     *
     * @return the number of ranks that were reset.
     */
    int resetPrefixCache()
    {
        int reset = 0;
        for (int r = 0; r < ranks.length; r++)
        {
            if (ranks[r].engine().resetPrefixCache(ranks[r].nowNs()))
            {
                reset++;
            }
            else
            {
                LOG.log(System.Logger.Level.WARNING, "instance {0} rank {1}: prefix cache not reset: {2} request(s) " +
                    "still running", index, r, ranks[r].engine().numRunning());
            }
        }
        return reset;
    }

    boolean isShuttingDown()
    {
        return ranks[0].engine().isShuttingDown();
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
     * @return 32 lowercase hex digits, as vLLM's {@code random_uuid()}; from the instance's seed. Safe from any thread
     *     (the token endpoints draw ids on an admission thread for large bodies).
     */
    synchronized String randomHexId()
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
     * tapedeck's own counters (not vLLM's), summed over the ranks: tokens written, batches, steps, and token-emission
     * lateness, in JSON.
     *
     * @param reset clear the lateness histograms after reading them (to measure a window).
     * @return the JSON text.
     */
    String statsJson(final boolean reset)
    {
        final org.HdrHistogram.Histogram lateness = HttpFront.newLatenessHistogram();
        long tokens = 0;
        long batches = 0;
        long steps = 0;
        long running = 0;
        long waiting = 0;
        for (final HttpFront front : ranks)
        {
            lateness.add(front.emissionLatenessNs());
            tokens += front.tokensEmitted();
            batches += front.batches();
            steps += front.engine().stepCount();
            running += front.engine().numRunning();
            waiting += front.engine().numWaiting();
            if (reset)
            {
                front.emissionLatenessNs().reset();
            }
        }
        return "{\"instance\":" + index + ",\"data_parallel_size\":" + ranks.length + ",\"tokens\":" + tokens +
            ",\"batches\":" + batches + ",\"steps\":" + steps + ",\"running\":" + running +
            ",\"waiting\":" + waiting +
            ",\"emission_lateness_us\":{\"count\":" + lateness.getTotalCount() +
            ",\"p50\":" + micros(lateness.getValueAtPercentile(50)) +
            ",\"p90\":" + micros(lateness.getValueAtPercentile(90)) +
            ",\"p99\":" + micros(lateness.getValueAtPercentile(99)) +
            ",\"p999\":" + micros(lateness.getValueAtPercentile(99.9)) +
            ",\"max\":" + micros(lateness.getMaxValue()) + "}}";
    }

    private static String micros(final long ns)
    {
        return Long.toString(ns / 1000);
    }

    /**
     * @param channel the bound listening channel.
     * @param value how it was bound, to listen again after a {@code down} fault.
     */
    void serverChannel(final Channel channel, final ServerBootstrap value)
    {
        serverChannel = channel;
        bootstrap = value;
        boundAddress = (InetSocketAddress)channel.localAddress();
    }

    /**
     * @param channel a new connection of this instance.
     */
    void connected(final Channel channel)
    {
        connections.add(channel);
    }

    FaultInjector faults()
    {
        return faults;
    }

    Lifecycle lifecycle()
    {
        return lifecycle;
    }



    /**
     * A {@code down} fault: stop listening, reset every connection (TCP RST), abort what was in flight and forget the
     * KV cache, as a pod that died.
     */
    void goDown()
    {
        if (down || isShuttingDown())
        {
            return;
        }
        down = true;
        serverChannel.close();
        for (final Channel channel : connections)
        {
            channel.config().setOption(ChannelOption.SO_LINGER, 0);
            channel.close();
        }
        abortAll();
        resetPrefixCache();
    }

    /**
     * The end of a {@code down} fault: listen again on the same port.
     */
    void comeBack()
    {
        if (!down || isShuttingDown())
        {
            return;
        }
        down = false;
        final InetSocketAddress address = boundAddress;
        bootstrap.bind(address).addListener((ChannelFutureListener)future ->
        {
            if (future.isSuccess())
            {
                serverChannel = future.channel();
            }
            else
            {
                LOG.log(System.Logger.Level.WARNING, "instance {0}: cannot listen on {1} again after a down fault: " +
                    "{2}", index, address, String.valueOf(future.cause()));
            }
        });
    }

    /**
     * A {@code stall} fault: every rank's engine stops taking steps, or goes on.
     *
     * @param stalled true to stall, false to resume.
     */
    void stall(final boolean stalled)
    {
        for (final HttpFront front : ranks)
        {
            front.stall(stalled);
        }
    }

    /**
     * A {@code kv-events} fault on every rank's publisher.
     *
     * @param action {@code KV_EVENTS_DROP}, {@code KV_EVENTS_DELAY}, or null to end the fault.
     * @param delayNs how long batches are held back ({@code KV_EVENTS_DELAY}).
     */
    void kvEventsFault(final FaultSchedule.Action action, final long delayNs)
    {
        for (final EngineConfig config : rankConfigs)
        {
            if (config.kvEventSink() instanceof KvEventStager)
            {
                ((KvEventStager)config.kvEventSink()).fault(FaultSchedule.Action.KV_EVENTS_DROP == action,
                    FaultSchedule.Action.KV_EVENTS_DELAY == action ? delayNs : 0);
            }
        }
    }

    Channel serverChannel()
    {
        return serverChannel;
    }

    int boundPort()
    {
        return boundAddress.getPort();
    }
}
