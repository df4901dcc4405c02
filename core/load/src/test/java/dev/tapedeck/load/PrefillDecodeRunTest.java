package dev.tapedeck.load;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code load --prefill-url --decode-url} against a fake prefill server and a fake decode server on real sockets: the
 * two hops a disaggregation proxy sends, the TTFT split in the report (JSON, table, HTML), the server's KV transfer
 * time from the decode server's metrics, and the failures of the prefill hop counted with their reasons.
 */
@Timeout(60)
class PrefillDecodeRunTest
{
    private static final int REQUESTS = 6;
    private static final long PREFILL_MS = 40;
    private static final long DECODE_FIRST_TOKEN_MS = 15;

    private static LoadContext context(final FakePrefillDecode servers, final ByteArrayOutputStream out)
    {
        return new LoadContext().prefillUrl(servers.prefillUrl()).decodeUrl(servers.decodeUrl()).model("m")
            .concurrency(2).maxRequests(REQUESTS).promptTokens("16")
            .outputTokens(String.valueOf(FakePrefillDecode.OUTPUT_TOKENS)).requestTimeoutNs(10_000_000_000L)
            .drainTimeoutNs(10_000_000_000L).progress(false)
            .streams(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(new ByteArrayOutputStream()));
    }

    private static ObjectNode run(final LoadContext context) throws Exception
    {
        try (Load load = Load.start(context))
        {
            return load.await();
        }
    }

    private static Map<String, Long> errors(final JsonNode point)
    {
        final Map<String, Long> errors = new TreeMap<>();
        point.path("errors").properties().forEach(e -> errors.put(e.getKey(), e.getValue().asLong()));
        return errors;
    }

    @Test
    void shouldSendBothHopsAndSplitTheTimeToFirstToken() throws Exception
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (FakePrefillDecode servers = new FakePrefillDecode(FakePrefillDecode.Prefill.OK, PREFILL_MS,
            DECODE_FIRST_TOKEN_MS, true))
        {
            final ObjectNode report = run(context(servers, out)
                .scrapeMetrics(List.of(servers.decodeUrl().resolve("/metrics"))));
            assertEquals(List.of(), servers.problems());
            assertEquals(REQUESTS, servers.prefillRequests());
            assertEquals(REQUESTS, servers.decodeRequests());

            final JsonNode point = report.path("points").path(0);
            assertEquals(REQUESTS, point.path("requests").path("completed").asLong(), point.toString());
            assertEquals(0, point.path("requests").path("failed").asLong(), point.toString());
            assertEquals(REQUESTS * FakePrefillDecode.OUTPUT_TOKENS,
                point.path("tokens").path("output_total").asLong());
            assertEquals(servers.prefillUrl().toString(), report.path("target").path("prefill_url").asText());
            assertEquals(servers.decodeUrl().toString(), report.path("target").path("decode_url").asText());

            final JsonNode split = point.path("prefill_decode").path("ttft_split_ms");
            final JsonNode latency = point.path("latency_ms");
            for (final String part : List.of("prefill", "handoff", "decode_first_token"))
            {
                assertEquals(REQUESTS, split.path(part).path("count").asLong(), part + ": " + split);
            }
            assertTrue(split.path("prefill").path("min").asDouble() >= PREFILL_MS, split.toString());
            assertTrue(split.path("decode_first_token").path("min").asDouble() >= DECODE_FIRST_TOKEN_MS,
                split.toString());
            assertTrue(split.path("decode_first_token").path("min").asDouble() < PREFILL_MS + 200,
                "the decode hop does not include the prefill: " + split);
            assertTrue(latency.path("ttft").path("min").asDouble() >= PREFILL_MS + DECODE_FIRST_TOKEN_MS,
                latency.toString());
            // per request, TTFT (from the intended send) = dispatch lateness + prefill + handoff + decode first token
            final double parts = latency.path("dispatch_lateness").path("mean").asDouble() +
                split.path("prefill").path("mean").asDouble() + split.path("handoff").path("mean").asDouble() +
                split.path("decode_first_token").path("mean").asDouble();
            assertEquals(latency.path("ttft").path("mean").asDouble(), parts, 1.0, point.toString());

            final JsonNode kv = point.path("prefill_decode").path("kv_transfer");
            assertTrue(kv.path("reported").asBoolean(), kv.toString());
            assertEquals(REQUESTS, kv.path("transfers").asLong(), kv.toString());
            assertEquals(FakePrefillDecode.TRANSFER_SECONDS * 1e3, kv.path("mean_ms").asDouble(), 1e-6);
            assertEquals(split.path("decode_first_token").path("mean").asDouble() -
                FakePrefillDecode.TRANSFER_SECONDS * 1e3,
                kv.path("decode_first_token_after_transfer_mean_ms").asDouble(), 0.01);

            final String table = out.toString(StandardCharsets.UTF_8);
            System.out.println(table);
            assertTrue(table.contains("TTFT split p50/p99 ms: prefill "), table);
            assertTrue(table.contains("| KV transfer: mean 4.00 ms over 6 (server)"), table);
            final String html = HtmlReport.render(report);
            assertTrue(html.contains("Prefill/decode: TTFT split"), "html has the split");
            assertTrue(html.contains("prefill " + servers.prefillUrl() + ", then decode " + servers.decodeUrl()));
        }
    }

    @Test
    void shouldKeepTheClientsOwnStreamSettingOnTheDecodeHop() throws Exception
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (FakePrefillDecode servers = new FakePrefillDecode(FakePrefillDecode.Prefill.OK, 5, 5, true))
        {
            final ObjectNode report = run(context(servers, out).stream(false)
                .endpoint(RequestBodies.Endpoint.CHAT));
            assertEquals(List.of(), servers.problems());
            final JsonNode point = report.path("points").path(0);
            assertEquals(REQUESTS, point.path("requests").path("completed").asLong(), point.toString());
            assertEquals(REQUESTS, point.path("prefill_decode").path("ttft_split_ms").path("decode_first_token")
                .path("count").asLong());
            final JsonNode kv = point.path("prefill_decode").path("kv_transfer");
            assertFalse(kv.path("reported").asBoolean(), kv.toString());
            assertTrue(kv.path("note").asText().startsWith("not scraped"), kv.toString());
        }
    }

    @Test
    void shouldFailEveryRequestWhosePrefillFailsWithoutAskingTheDecodeServer() throws Exception
    {
        try (FakePrefillDecode servers = new FakePrefillDecode(FakePrefillDecode.Prefill.HTTP_500, 0, 0, false))
        {
            final JsonNode point = run(context(servers, new ByteArrayOutputStream())).path("points").path(0);
            assertEquals(Map.of("prefill_http_500", (long)REQUESTS), errors(point), point.toString());
            assertEquals(0, point.path("requests").path("completed").asLong());
            assertEquals(0, servers.decodeRequests(), "nothing goes to decode without the prefill's parameters");
            assertEquals(0, point.path("prefill_decode").path("ttft_split_ms").path("prefill").path("count").asLong());
        }
    }

    @Test
    void shouldFailEveryRequestWhosePrefillGaveNoKvTransferParams() throws Exception
    {
        for (final FakePrefillDecode.Prefill mode : List.of(FakePrefillDecode.Prefill.NO_PARAMS,
            FakePrefillDecode.Prefill.NULL_PARAMS))
        {
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (FakePrefillDecode servers = new FakePrefillDecode(mode, 0, 0, false))
            {
                final ObjectNode report = run(context(servers, out)
                    .scrapeMetrics(List.of(servers.decodeUrl().resolve("/metrics"))));
                final JsonNode point = report.path("points").path(0);
                assertEquals(Map.of("prefill_no_kv_transfer_params", (long)REQUESTS), errors(point), mode + ": " +
                    point);
                assertEquals(REQUESTS, servers.prefillRequests(), mode.toString());
                assertEquals(0, servers.decodeRequests(), mode.toString());
                final JsonNode kv = point.path("prefill_decode").path("kv_transfer");
                assertEquals("not reported by the server (no vllm:nixl_xfer_time_seconds)", kv.path("note").asText(),
                    kv.toString());
                assertTrue(out.toString(StandardCharsets.UTF_8).contains("KV transfer: not reported by the server"));
            }
        }
    }

    @Test
    void shouldRefuseAnIncompleteOrMixedTarget()
    {
        final URI prefill = URI.create("http://127.0.0.1:8100");
        final URI decode = URI.create("http://127.0.0.1:8200");
        assertRefused("--prefill-url and --decode-url go together: give both or neither",
            new LoadContext().prefillUrl(prefill));
        assertRefused("--prefill-url and --decode-url go together: give both or neither",
            new LoadContext().decodeUrl(decode));
        assertRefused("give --url or --prefill-url with --decode-url, not both",
            new LoadContext().urls(List.of(decode)).prefillUrl(prefill).decodeUrl(decode));
        assertRefused("--decode-url must be an http:// or https:// URL such as http://127.0.0.1:8000 (a path prefix " +
            "is kept), got 'localhost:8200'", new LoadContext().prefillUrl(prefill).decodeUrl(URI.create(
            "localhost:8200")));
        assertRefused("--prefill-url must be an http:// or https:// URL such as http://127.0.0.1:8000 (a path prefix " +
            "is kept), got 'ftp://h/'", new LoadContext().prefillUrl(URI.create("ftp://h/")).decodeUrl(decode));
        assertTrue(new LoadContext().prefillUrl(URI.create("https://h:8100")).decodeUrl(decode).concurrency(1)
            .maxRequests(1).conclude().isPrefillDecode(), "https is a target like another");
        final LoadContext good = new LoadContext().prefillUrl(prefill).decodeUrl(decode).concurrency(1)
            .maxRequests(1);
        assertTrue(good.conclude().isPrefillDecode());
    }

    private static void assertRefused(final String message, final LoadContext context)
    {
        context.concurrency(1).maxRequests(1);
        assertEquals(message, assertThrows(IllegalArgumentException.class, context::conclude).getMessage());
    }
}
