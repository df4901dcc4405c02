package dev.tapedeck.http;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.net.Transport;
import dev.tapedeck.serve.ServeContext;
import dev.tapedeck.tokens.ChatTemplate;

/**
 * One {@code serve} instance without sockets or threads: its engine and the production connection pipeline (codec,
 * body limit, {@link OpenAiHandler}) on {@link EmbeddedChannel}s, all on one manual clock (Netty's
 * {@link MockTicker}, read by the engine and by the event loops' timers). Nothing happens until the test moves time:
 * {@link #step()} jumps to the end of the engine's current step and runs the timer that is due, so every step's
 * writes can be inspected on their own. Requests go in as raw bytes; responses come out as raw bytes.
 */
final class EmbeddedServe implements AutoCloseable
{
    static final String MODEL = "Qwen/Qwen3-8B";
    static final long STEP_NS = 10_000_000L;
    static final int MAX_BODY_BYTES = 4096;
    static final int MAX_MODEL_LEN = 256;
    /** Every step lasts {@link #STEP_NS}, prefill or decode, whatever the batch. */
    private static final LatencyModel FIXED_STEPS = new StepLatencyModel(
        new StepCoefficients("fixed-10ms", STEP_NS / 1000.0, 0, 0, 0, 0, "unit tests"));

    final MockTicker ticker = Ticker.newMockTicker();
    final ByteTokenizer tokenizer;
    final Instance instance;
    private final EmbeddedChannel loopChannel;
    private final CompletionAdmission admission;
    private final List<EmbeddedChannel> connections = new ArrayList<>();
    private final ConnectionGuard.Census census = new ConnectionGuard.Census(ticker::nanoTime);

    /**
     * @param options face settings, usually {@link #options(ServeOptions.Mode)} or {@link #options(String)}; its clock
     *     becomes the test's ticker, which the engine and the loop's timers share.
     * @param engine the engine's settings, usually {@link #engine()} adjusted; concluded here.
     * @param tokenizer the tokenizer.
     */
    EmbeddedServe(final ServeContext options, final EngineConfig engine, final ByteTokenizer tokenizer)
    {
        this(options, engine, tokenizer, null);
    }

    /**
     * @param options face settings.
     * @param engine the engine's settings; concluded here.
     * @param tokenizer the tokenizer.
     * @param preparer where large bodies are prepared ({@link CompletionAdmission#OFFLOAD_BODY_BYTES}), or null for
     *     the loop.
     */
    EmbeddedServe(final ServeContext options, final EngineConfig engine, final ByteTokenizer tokenizer,
        final java.util.concurrent.Executor preparer)
    {
        this.tokenizer = tokenizer;
        ticker.advance(1, TimeUnit.SECONDS);
        loopChannel = EmbeddedChannel.builder().ticker(ticker).build();
        final EngineConfig config = engine.tokenSpace(tokenizer.vocabulary().randomTokenIds(), ByteTokenizer.EOS)
            .conclude();
        final ServeOptions face = options.nanoClock(ticker::nanoTime).conclude().serveOptions();
        instance = new Instance(0, loopChannel.eventLoop(), face, List.of(config), tokenizer);
        admission = new CompletionAdmission(instance, preparer);
    }

    /**
     * @return an instance that echoes the prompt (chat: the last message), with the default engine settings.
     */
    static EmbeddedServe echo()
    {
        return new EmbeddedServe(options(ServeOptions.Mode.ECHO), engine(), new ByteTokenizer());
    }

    /**
     * @param mode random or echo output.
     * @return settings serving {@link #MODEL} (also as "alias"), bodies up to {@link #MAX_BODY_BYTES}, no API key.
     */
    static ServeContext options(final ServeOptions.Mode mode)
    {
        return new ServeContext().model(MODEL).servedModelNames(List.of(MODEL, "alias")).mode(mode)
            .chatTemplate(ChatTemplate.PLAIN).maxRequestBodyBytes(MAX_BODY_BYTES).shutdownTimeoutNs(0)
            .vllmVersion("0.0.0-test").transport(Transport.NIO).connectionLimits(ConnectionLimits.NONE);
    }

    /**
     * @param apiKey the key {@code /v1} requests must carry.
     * @return echo settings with an API key.
     */
    static ServeContext options(final String apiKey)
    {
        return options(ServeOptions.Mode.ECHO).servedModelNames(List.of(MODEL)).apiKey(apiKey);
    }

    /**
     * @return 10 ms steps and a context of {@link #MAX_MODEL_LEN} tokens; everything else the engine's default.
     */
    static EngineConfig engine()
    {
        return new EngineConfig().latencyModel(FIXED_STEPS).maxModelLen(MAX_MODEL_LEN);
    }

    /**
     * @return a new client connection to the instance (one more channel on the same engine and clock).
     */
    EmbeddedChannel connect()
    {
        final EmbeddedChannel channel = EmbeddedChannel.builder().ticker(ticker).build();
        HttpServer.addHandlers(channel.pipeline(), HttpServer.decoderConfig(), instance, admission, census);
        connections.add(channel);
        return channel;
    }

    Engine engine0()
    {
        return instance.firstEngine();
    }

    /**
     * Write requests to a connection as one read, as a client that pipelines them would.
     *
     * @param channel the connection.
     * @param requests raw requests, e.g. from {@link #post}.
     */
    static void send(final EmbeddedChannel channel, final String... requests)
    {
        channel.writeInbound(Unpooled.copiedBuffer(String.join("", requests), StandardCharsets.UTF_8));
    }

    /**
     * @param path the target.
     * @param json the body.
     * @param headers extra header lines, each {@code "name: value"}.
     * @return a raw HTTP/1.1 POST with a content length.
     */
    static String post(final String path, final String json, final String... headers)
    {
        final StringBuilder request = new StringBuilder("POST ").append(path).append(" HTTP/1.1\r\n")
            .append("host: test\r\ncontent-type: application/json\r\ncontent-length: ")
            .append(json.getBytes(StandardCharsets.UTF_8).length).append("\r\n");
        for (final String header : headers)
        {
            request.append(header).append("\r\n");
        }
        return request.append("\r\n").append(json).toString();
    }

    /**
     * @param path the target.
     * @param headers extra header lines.
     * @return a raw HTTP/1.1 GET.
     */
    static String get(final String path, final String... headers)
    {
        final StringBuilder request = new StringBuilder("GET ").append(path).append(" HTTP/1.1\r\nhost: test\r\n");
        for (final String header : headers)
        {
            request.append(header).append("\r\n");
        }
        return request.append("\r\n").toString();
    }

    /**
     * Move the clock to the engine's next deadline (the end of its step) and run what is due there.
     *
     * @return false, with the clock untouched, when the engine is idle.
     */
    boolean step()
    {
        final long next = engine0().nextDeadlineNs();
        if (Long.MAX_VALUE == next)
        {
            return false;
        }
        ticker.advance(Math.max(0, next - ticker.nanoTime()), TimeUnit.NANOSECONDS);
        runTasks();
        return true;
    }

    /**
     * Step until the engine is idle.
     *
     * @return the number of steps.
     */
    int runUntilIdle()
    {
        int steps = 0;
        while (step())
        {
            if (++steps > 10_000)
            {
                throw new AssertionError("the engine never went idle");
            }
        }
        return steps;
    }

    /**
     * Run tasks and timers due now on every event loop.
     */
    void runTasks()
    {
        loopChannel.runPendingTasks();
        for (final EmbeddedChannel channel : connections)
        {
            channel.runPendingTasks();
        }
    }

    /**
     * @param channel a connection.
     * @return what the server wrote to it since the last call, one array per write (released).
     */
    static List<byte[]> writes(final EmbeddedChannel channel)
    {
        final List<byte[]> writes = new ArrayList<>();
        ByteBuf buffer;
        while (null != (buffer = channel.readOutbound()))
        {
            try
            {
                writes.add(ByteBufUtil.getBytes(buffer));
            }
            finally
            {
                buffer.release();
            }
        }
        return writes;
    }

    /**
     * @param channel a connection.
     * @return what the server wrote to it since the last call, as one array.
     */
    static byte[] bytes(final EmbeddedChannel channel)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (final byte[] write : writes(channel))
        {
            out.writeBytes(write);
        }
        return out.toByteArray();
    }

    /**
     * @param channel a connection.
     * @return the responses in what the server wrote to it since the last call.
     */
    static List<HttpWire.Response> responses(final EmbeddedChannel channel)
    {
        return HttpWire.parse(bytes(channel));
    }

    /**
     * @return the instance's Prometheus exposition.
     */
    String metrics()
    {
        final StringBuilder text = new StringBuilder();
        instance.exposition().write(text);
        return text.toString();
    }

    @Override
    public void close()
    {
        for (final EmbeddedChannel channel : connections)
        {
            channel.finishAndReleaseAll();
        }
        loopChannel.finishAndReleaseAll();
    }
}
