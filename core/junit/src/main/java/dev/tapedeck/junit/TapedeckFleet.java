package dev.tapedeck.junit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.kvevents.KvEventsSettings;
import dev.tapedeck.latency.KnobLatencyModel;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.serve.Serve;
import dev.tapedeck.serve.ServeContext;

/**
 * A simulated vLLM fleet in the test's own JVM: {@code instances} OpenAI-compatible servers on free ports of
 * 127.0.0.1, each with its engine(s), {@code /metrics} and, when asked, KV events on a free ZeroMQ port.
 * <p>
 * As a JUnit 5 extension, registered on a static field it starts before the class's first test and stops after its
 * last; on an instance field it starts before and stops after each test:
 * <pre>{@code
 * @RegisterExtension
 * static TapedeckFleet fleet = TapedeckFleet.builder().instances(4).stepProfile("dense-8b-rtxpro6000").build();
 * }</pre>
 * In a JMH benchmark, call {@link #start()} in {@code @Setup} and {@link #close()} in {@code @TearDown}.
 * <p>
 * Threading: start and stop from one thread (JUnit's or JMH's); the URL and endpoint accessors may then be read from
 * any thread. The engines run on the fleet's own event loops.
 */
public final class TapedeckFleet implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
    AfterEachCallback, AutoCloseable
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();

    private final ServeContext template;
    private Serve serve;
    private int classDepth;

    private TapedeckFleet(final ServeContext template)
    {
        this.template = template;
    }

    /**
     * @return a builder with the defaults of {@code tapedeck serve}: one instance, Qwen/Qwen3-8B, the default step
     *     model, no KV events.
     */
    public static Builder builder()
    {
        return new Builder();
    }

    /**
     * Start the fleet (a second call while it runs does nothing).
     *
     * @return this.
     * @throws UncheckedIOException if a server cannot start.
     */
    public synchronized TapedeckFleet start()
    {
        if (null == serve)
        {
            try
            {
                serve = Serve.start(template);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting the fleet", ex);
            }
        }
        return this;
    }

    /**
     * Stop the fleet at once (requests in flight are aborted); it may be started again.
     */
    @Override
    public synchronized void close()
    {
        if (null != serve)
        {
            serve.close();
            serve = null;
        }
    }

    @Override
    public void beforeAll(final ExtensionContext context)
    {
        // JUnit calls a static extension's beforeAll/afterAll again for each @Nested class: one fleet serves them all
        if (0 == classDepth++)
        {
            start();
        }
    }

    @Override
    public void afterAll(final ExtensionContext context)
    {
        if (0 == --classDepth)
        {
            close();
        }
    }

    @Override
    public void beforeEach(final ExtensionContext context)
    {
        if (0 == classDepth)
        {
            start();
        }
    }

    @Override
    public void afterEach(final ExtensionContext context)
    {
        if (0 == classDepth)
        {
            close();
        }
    }

    /**
     * @return each instance's base URL, {@code http://127.0.0.1:port}, in instance order.
     */
    public List<URI> baseUrls()
    {
        return running().baseUrls();
    }

    /**
     * @param instance an instance index.
     * @return its base URL, {@code http://127.0.0.1:port}.
     */
    public URI baseUrl(final int instance)
    {
        return running().baseUrls().get(instance);
    }

    /**
     * @return every engine's KV event PUB endpoint as bound ({@code tcp://127.0.0.1:port}), engine
     *     {@code instance * dataParallelSize + rank}; empty unless the builder asked for KV events.
     */
    public List<String> kvEventEndpoints()
    {
        return running().kvEventEndpoints();
    }

    /**
     * @param engine an engine index, {@code instance * dataParallelSize + rank}.
     * @return the topic its KV event batches carry (llm-d's {@code kv@<pod>@<model>}).
     */
    public String kvEventTopic(final int engine)
    {
        return running().kvEventPublishers().get(engine).settings().topic();
    }

    /**
     * @return the running server, for what this class does not wrap (engine configs, the tokenizer, publishers).
     */
    public Serve serve()
    {
        return running();
    }

    /**
     * Scrape one instance's {@code /metrics} now.
     *
     * @param instance an instance index.
     * @return the parsed exposition.
     * @throws UncheckedIOException if the scrape fails.
     */
    public MetricsSnapshot scrapeMetrics(final int instance)
    {
        final HttpRequest request = HttpRequest.newBuilder(baseUrl(instance).resolve("/metrics"))
            .timeout(Duration.ofSeconds(10)).GET().build();
        try
        {
            final HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            if (200 != response.statusCode())
            {
                throw new IOException("GET " + request.uri() + " answered " + response.statusCode());
            }
            return MetricsSnapshot.parse(response.body());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while scraping " + request.uri(), ex);
        }
    }

    private synchronized Serve running()
    {
        if (null == serve)
        {
            throw new IllegalStateException("the fleet is not running: register it with @RegisterExtension or call " +
                "start()");
        }
        return serve;
    }

    /**
     * Builds a {@link TapedeckFleet}; each setter names its default. Not thread safe.
     */
    public static final class Builder
    {
        private final EngineConfig engine = new EngineConfig();
        private final ServeContext context = new ServeContext().host("127.0.0.1").port(0).engine(engine);
        private boolean kvEvents;

        private Builder()
        {
        }

        /**
         * @param value independent servers, each on its own free port (default 1).
         * @return this.
         */
        public Builder instances(final int value)
        {
            context.instances(value);
            return this;
        }

        /**
         * @param value engines behind each server's port, as vLLM's data-parallel ranks (default 1).
         * @return this.
         */
        public Builder dataParallelSize(final int value)
        {
            context.dataParallelSize(value);
            return this;
        }

        /**
         * @param value the served model name (default Qwen/Qwen3-8B).
         * @return this.
         */
        public Builder model(final String value)
        {
            context.model(value);
            return this;
        }

        /**
         * @param profileName a built-in step model, as {@code serve --step-profile}: {@code dense-8b-rtxpro6000}
         *     (default), {@code dense-32b-tp2-rtxpro6000}, {@code moe-30b-a3b-rtxpro6000}.
         * @return this.
         * @throws IllegalArgumentException naming the known profiles if the name is not one.
         */
        public Builder stepProfile(final String profileName)
        {
            return latencyModel(new StepLatencyModel(StepCoefficients.profile(profileName)));
        }

        /**
         * Fixed timing, as llm-d-inference-sim's {@code --time-to-first-token} and {@code --inter-token-latency}.
         *
         * @param timeToFirstTokenMs time to first token in milliseconds.
         * @param interTokenLatencyMs time between tokens in milliseconds.
         * @return this.
         */
        public Builder fixedLatency(final double timeToFirstTokenMs, final double interTokenLatencyMs)
        {
            return latencyModel(new KnobLatencyModel(KnobLatencyModel.Calculator.CONSTANT,
                (long)(timeToFirstTokenMs * 1e6), 0, (long)(interTokenLatencyMs * 1e6), 0, 0, 0, 0, 1.0,
                engine.maxNumSeqs()));
        }

        /**
         * @param value any latency model (default: the {@code dense-8b-rtxpro6000} step model).
         * @return this.
         */
        public Builder latencyModel(final LatencyModel value)
        {
            engine.latencyModel(value);
            return this;
        }

        /**
         * @param value most requests running at once per engine (default 256).
         * @return this.
         */
        public Builder maxNumSeqs(final int value)
        {
            engine.maxNumSeqs(value);
            return this;
        }

        /**
         * @param value KV-cache capacity per engine in blocks of 16 tokens (default 33,600).
         * @return this.
         */
        public Builder kvCacheBlocks(final int value)
        {
            engine.kvCacheBlocks(value);
            return this;
        }

        /**
         * @param value seed of every random draw; engine e uses seed + e (default 0).
         * @return this.
         */
        public Builder seed(final long value)
        {
            engine.seed(value);
            return this;
        }

        /**
         * @param value true to publish KV-cache events on a free ZeroMQ port per engine, with a replay socket on
         *     another (default false).
         * @return this.
         */
        public Builder kvEvents(final boolean value)
        {
            kvEvents = value;
            return this;
        }

        /**
         * Adjust anything else {@code serve} offers: LoRA, API key, tokenizer, and through
         * {@link ServeContext#engine()} every engine limit.
         *
         * @param settings called once, at {@link #build()}, with the fleet's context.
         * @return this.
         */
        public Builder configure(final Consumer<ServeContext> settings)
        {
            settings.accept(context);
            return this;
        }

        /**
         * @return the fleet, not started: the extension or {@link TapedeckFleet#start()} starts it.
         * @throws IllegalArgumentException if a setting is invalid.
         */
        public TapedeckFleet build()
        {
            if (kvEvents)
            {
                context.kvEvents(KvEventsSettings.publishOn("tcp://127.0.0.1:*").replayEndpoint("tcp://127.0.0.1:*"));
            }
            return new TapedeckFleet(context.conclude());
        }
    }
}
