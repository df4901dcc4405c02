package dev.tapedeck.load;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A fake prefill server and a fake decode server (JDK HTTP servers on 127.0.0.1, ephemeral ports) that check what a
 * disaggregation proxy must send: the prefill hop with {@code max_tokens} 1, not streamed, asking for
 * {@code do_remote_decode}; the decode hop with the client's own {@code max_tokens} and {@code stream} and the
 * prefill's {@code kv_transfer_params} verbatim. What they find wrong is collected in {@link #problems()} (and the
 * request is answered 400). The decode server's {@code /metrics} exposes {@code vllm:nixl_xfer_time_seconds}, grown by
 * {@link #TRANSFER_SECONDS} per decode request.
 * <p>
 * Thread safe: each server answers on a small pool; the counters and collections are concurrent.
 */
final class FakePrefillDecode implements AutoCloseable
{
    /** What the prefill server answers. */
    enum Prefill
    {
        /** 200 with kv_transfer_params. */
        OK,
        /** 500 with an error body. */
        HTTP_500,
        /** 200 without kv_transfer_params. */
        NO_PARAMS,
        /** 200 with {@code "kv_transfer_params": null}. */
        NULL_PARAMS
    }

    /** Server-side KV transfer time per decode request, in seconds. */
    static final double TRANSFER_SECONDS = 0.004;
    static final int OUTPUT_TOKENS = 4;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer prefillServer;
    private final HttpServer decodeServer;
    private final ExecutorService pool = Executors.newFixedThreadPool(8);
    private final Prefill mode;
    private final long prefillDelayMs;
    private final long decodeFirstTokenDelayMs;
    private final boolean exposeTransferHistogram;
    private final AtomicInteger prefillRequests = new AtomicInteger();
    private final AtomicInteger decodeRequests = new AtomicInteger();
    private final AtomicLong transfers = new AtomicLong();
    private final Map<String, String> issuedParams = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();

    FakePrefillDecode(final Prefill mode, final long prefillDelayMs, final long decodeFirstTokenDelayMs,
        final boolean exposeTransferHistogram) throws IOException
    {
        this.mode = mode;
        this.prefillDelayMs = prefillDelayMs;
        this.decodeFirstTokenDelayMs = decodeFirstTokenDelayMs;
        this.exposeTransferHistogram = exposeTransferHistogram;
        prefillServer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        decodeServer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        for (final String path : List.of("/v1/completions", "/v1/chat/completions"))
        {
            prefillServer.createContext(path, this::prefill);
            decodeServer.createContext(path, this::decode);
        }
        decodeServer.createContext("/metrics", this::metrics);
        prefillServer.setExecutor(pool);
        decodeServer.setExecutor(pool);
        prefillServer.start();
        decodeServer.start();
    }

    URI prefillUrl()
    {
        return URI.create("http://127.0.0.1:" + prefillServer.getAddress().getPort());
    }

    URI decodeUrl()
    {
        return URI.create("http://127.0.0.1:" + decodeServer.getAddress().getPort());
    }

    int prefillRequests()
    {
        return prefillRequests.get();
    }

    int decodeRequests()
    {
        return decodeRequests.get();
    }

    List<String> problems()
    {
        return List.copyOf(problems);
    }

    private void prefill(final HttpExchange exchange) throws IOException
    {
        final int n = prefillRequests.incrementAndGet();
        final JsonNode body = JSON.readTree(exchange.getRequestBody().readAllBytes());
        final JsonNode params = body.path("kv_transfer_params");
        check(exchange, 1 == body.path("max_tokens").asInt(-1), "prefill max_tokens is not 1: " + body);
        check(exchange, body.has("stream") && !body.path("stream").asBoolean(true), "prefill streams: " + body);
        check(exchange, !body.has("stream_options"), "prefill has stream_options: " + body);
        check(exchange, params.path("do_remote_decode").asBoolean(false), "prefill lacks do_remote_decode: " + body);
        check(exchange, params.has("do_remote_prefill") && !params.path("do_remote_prefill").asBoolean(true),
            "prefill lacks do_remote_prefill false: " + body);
        for (final String none : List.of("remote_engine_id", "remote_block_ids", "remote_host", "remote_port"))
        {
            check(exchange, params.has(none) && params.get(none).isNull(), "prefill " + none + " not null: " + body);
        }
        check(exchange, body.has("prompt") || body.has("messages"), "prefill has no prompt: " + body);
        sleep(prefillDelayMs);
        final String issued = "{\"do_remote_prefill\":true,\"do_remote_decode\":false,\"remote_block_ids\":[" + n +
            "," + (n + 1) + "],\"remote_engine_id\":\"engine-p\",\"remote_request_id\":\"req-" + n +
            "\",\"remote_host\":\"127.0.0.1\",\"remote_port\":5600,\"tp_size\":1,\"note\":\"a } in \\\"a\\\" string\"}";
        issuedParams.put("req-" + n, issued);
        final String answer = "{\"id\":\"cmpl-p" + n + "\",\"object\":\"text_completion\",\"model\":\"m\"," +
            "\"choices\":[{\"index\":0,\"text\":\"x\",\"finish_reason\":\"length\"}]," +
            "\"usage\":{\"prompt_tokens\":16,\"completion_tokens\":1,\"total_tokens\":17}";
        switch (mode)
        {
            case OK -> respond(exchange, 200, answer + ",\"kv_transfer_params\":" + issued + "}");
            case NULL_PARAMS -> respond(exchange, 200, answer + ",\"kv_transfer_params\":null}");
            case NO_PARAMS -> respond(exchange, 200, answer + "}");
            default -> respond(exchange, 500, "{\"error\":{\"message\":\"prefill broke\",\"code\":500}}");
        }
    }

    private void decode(final HttpExchange exchange) throws IOException
    {
        decodeRequests.incrementAndGet();
        final String raw = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        final JsonNode body = JSON.readTree(raw);
        final String id = body.path("kv_transfer_params").path("remote_request_id").asText("");
        final String issued = issuedParams.get(id);
        if (!check(exchange, null != issued, "decode without the prefill's kv_transfer_params: " + raw) ||
            !check(exchange, raw.contains("\"kv_transfer_params\":" + issued), "params not verbatim: " + raw) ||
            !check(exchange, OUTPUT_TOKENS == body.path("max_tokens").asInt(), "decode max_tokens changed: " + raw))
        {
            return;
        }
        final boolean stream = body.path("stream").asBoolean(false);
        if (stream && !check(exchange, body.has("stream_options"), "decode lost stream_options: " + raw))
        {
            return;
        }
        transfers.incrementAndGet();
        sleep(decodeFirstTokenDelayMs);
        if (!stream)
        {
            respond(exchange, 200, "{\"id\":\"cmpl-d\",\"object\":\"text_completion\",\"model\":\"m\",\"choices\":" +
                "[{\"index\":0,\"text\":\"tttt\",\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":16," +
                "\"completion_tokens\":" + OUTPUT_TOKENS + ",\"total_tokens\":" + (16 + OUTPUT_TOKENS) + "}}");
            return;
        }
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream out = exchange.getResponseBody())
        {
            for (int k = 1; k <= OUTPUT_TOKENS; k++)
            {
                out.write(("data: {\"id\":\"cmpl-d\",\"object\":\"text_completion\",\"choices\":[{\"index\":0," +
                    "\"text\":\"t\",\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":16,\"completion_tokens\":" +
                    k + ",\"total_tokens\":" + (16 + k) + "}}\n\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
                sleep(2);
            }
            out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
        }
    }

    private void metrics(final HttpExchange exchange) throws IOException
    {
        final long n = transfers.get();
        final String text = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} 0\n" +
            (!exposeTransferHistogram ? "" : "# TYPE vllm:nixl_xfer_time_seconds histogram\n" +
            "vllm:nixl_xfer_time_seconds_bucket{engine=\"0\",le=\"+Inf\"} " + n + "\n" +
            "vllm:nixl_xfer_time_seconds_sum{engine=\"0\"} " + n * TRANSFER_SECONDS + "\n" +
            "vllm:nixl_xfer_time_seconds_count{engine=\"0\"} " + n + "\n");
        respond(exchange, 200, text);
    }

    private boolean check(final HttpExchange exchange, final boolean ok, final String problem) throws IOException
    {
        if (!ok)
        {
            problems.add(problem);
            respond(exchange, 400, "{\"error\":{\"message\":\"bad request\",\"code\":400}}");
        }
        return ok;
    }

    private static void respond(final HttpExchange exchange, final int status, final String body) throws IOException
    {
        if (exchange.getResponseCode() > 0)
        {
            return; // answered already (a failed check)
        }
        final byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody())
        {
            out.write(bytes);
        }
    }

    private static void sleep(final long ms)
    {
        try
        {
            Thread.sleep(ms);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close()
    {
        prefillServer.stop(0);
        decodeServer.stop(0);
        pool.shutdownNow();
    }
}
