package dev.tapedeck.http;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.fault.FaultMix;
import dev.tapedeck.fault.FaultSchedule;
import dev.tapedeck.fault.FaultSettings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fault injection on real sockets: llm-d's canned errors at a rate, the per-request fault headers (only when
 * allowed), stream faults (reset, stall, first byte, abort) as a client sees them, the schedule's unhealthy and
 * down windows, and the {@code tapedeck:faults_injected_total} counter.
 */
class FaultInjectionIT
{
    private static final String STREAM = "{\"model\":\"" + TestServer.MODEL + "\",\"prompt\":\"hello\"," +
        "\"max_tokens\":12,\"ignore_eos\":true,\"stream\":true}";
    private static final String USAGE_STREAM = STREAM.replace("\"stream\":true",
        "\"stream\":true,\"stream_options\":{\"include_usage\":true}");
    private static final String FULL = "{\"model\":\"" + TestServer.MODEL + "\",\"prompt\":\"hello\"," +
        "\"max_tokens\":12,\"ignore_eos\":true}";

    private static TestServer server(final FaultSettings faults) throws Exception
    {
        return new TestServer(TestServer.context().faults(faults));
    }

    private static HttpResponse<String> post(final TestServer server, final String fault, final String body)
        throws Exception
    {
        final HttpRequest.Builder request = HttpRequest.newBuilder(server.uri("/v1/completions"))
            .timeout(Duration.ofSeconds(30)).header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
        if (null != fault)
        {
            request.header(FaultInjector.FAULT_HEADER, fault);
        }
        return server.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static double injected(final TestServer server, final String fault) throws Exception
    {
        return server.metric("tapedeck:faults_injected_total{fault=\"" + fault + "\",model_name=\"" +
            TestServer.MODEL + "\"}");
    }

    @Test
    void shouldAnswerEveryRequestWithLlmdsCannedErrorsAtFullRate() throws Exception
    {
        try (TestServer server = server(new FaultSettings(FaultMix.of(100, "rate_limit,model_not_found"), false,
            FaultSchedule.NONE)))
        {
            int rateLimited = 0;
            for (int i = 0; i < 20; i++)
            {
                final HttpResponse<String> response = post(server, null, FULL);
                if (429 == response.statusCode())
                {
                    rateLimited++;
                    assertEquals("1", response.headers().firstValue("retry-after").orElse(null));
                    assertTrue(response.body().contains("\"type\":\"RateLimitError\"") &&
                        response.body().contains("Rate limit reached for " + TestServer.MODEL), response.body());
                }
                else
                {
                    assertEquals(404, response.statusCode(), response.body());
                    assertTrue(response.body().contains("\"param\":\"model\"") &&
                        response.body().contains("-nonexistent' does not exist"), response.body());
                }
            }
            assertTrue(rateLimited > 0 && rateLimited < 20, "both types are drawn: " + rateLimited);
            assertEquals(rateLimited, injected(server, "rate_limit"));
            assertEquals(20 - rateLimited, injected(server, "model_not_found"));
            assertEquals(200, server.get("/health").statusCode(), "errors at a rate leave the instance healthy");
        }
    }

    @Test
    void shouldIgnoreFaultHeadersUnlessAllowed() throws Exception
    {
        try (TestServer server = TestServer.start())
        {
            final HttpResponse<String> response = post(server, "status:503", FULL);
            assertEquals(200, response.statusCode(), "a client cannot make the server fail by default");
            assertTrue(Double.isNaN(injected(server, "status")), "no fault metric without fault injection");
        }
    }

    @Test
    void shouldInjectTheFaultsHeadersAsk() throws Exception
    {
        try (TestServer server = server(new FaultSettings(FaultMix.NONE, true, FaultSchedule.NONE)))
        {
            final HttpResponse<String> status = post(server, "status:502", FULL);
            assertEquals(502, status.statusCode());
            assertTrue(status.body().contains("\"code\":502"), status.body());
            final HttpResponse<String> bad = post(server, "stall:2s@x", FULL);
            assertEquals(400, bad.statusCode());
            assertTrue(bad.body().contains("x-tapedeck-fault: fault 'stall:2s@x'"), bad.body());
            final HttpResponse<String> llmd = server.client.send(HttpRequest.newBuilder(server.uri("/v1/completions"))
                .header("content-type", "application/json").header(FaultInjector.RETURN_ERROR_HEADER, "418")
                .POST(HttpRequest.BodyPublishers.ofString(FULL)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(418, llmd.statusCode(), llmd.body());

            final HttpResponse<String> aborted = post(server, "abort@3", USAGE_STREAM);
            assertEquals(200, aborted.statusCode());
            assertTrue(aborted.body().contains("\"finish_reason\":\"abort\""), aborted.body());
            assertTrue(aborted.body().endsWith("data: [DONE]\n\n"), "an aborted stream still ends properly");
            final java.util.regex.Matcher usage = java.util.regex.Pattern.compile("\"completion_tokens\":(\\d+)")
                .matcher(aborted.body());
            assertTrue(usage.find(), aborted.body());
            final int generated = Integer.parseInt(usage.group(1));
            assertTrue(generated >= 3 && generated < 12, "aborted after 3 tokens were written: " + generated);

            assertThrows(IOException.class, () -> post(server, "reset@4", FULL),
                "a response that is not streamed is reset instead of written");
            assertEquals(200, post(server, null, FULL).statusCode(), "the server goes on");
            assertEquals(1, injected(server, "reset"));
            assertEquals(1, injected(server, "abort"));
            assertEquals(2, injected(server, "status"), "x-tapedeck-fault status:502 and X-Return-Error: 418");
        }
    }

    /** Reads a raw streamed response, noting when each piece arrived. */
    private static List<long[]> readTimed(final Socket socket, final StringBuilder text) throws IOException
    {
        final List<long[]> arrivals = new ArrayList<>();
        final InputStream in = socket.getInputStream();
        final byte[] buffer = new byte[8192];
        try
        {
            for (int n; (n = in.read(buffer)) >= 0; )
            {
                arrivals.add(new long[] {System.nanoTime(), text.length()});
                text.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
                if (text.indexOf("data: [DONE]") >= 0)
                {
                    break;
                }
            }
        }
        catch (final java.net.SocketException reset)
        {
            text.append("<reset>");
        }
        return arrivals;
    }

    private static Socket send(final TestServer server, final String fault, final String body) throws IOException
    {
        final Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", server.ports.get(0)), 5000);
        socket.setSoTimeout(20_000);
        socket.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json" +
            "\r\n" + FaultInjector.FAULT_HEADER + ": " + fault + "\r\ncontent-length: " + body.length() + "\r\n\r\n" +
            body).getBytes(StandardCharsets.US_ASCII));
        return socket;
    }

    @Test
    void shouldResetStallAndDelayStreamsAsAsked() throws Exception
    {
        try (TestServer server = server(new FaultSettings(FaultMix.NONE, true, FaultSchedule.NONE)))
        {
            final StringBuilder reset = new StringBuilder();
            try (Socket socket = send(server, "reset@3", STREAM))
            {
                readTimed(socket, reset);
            }
            assertTrue(reset.toString().endsWith("<reset>") || !reset.toString().contains("[DONE]"), reset.toString());
            assertFalse(reset.toString().contains("[DONE]"), "a reset stream never ends: " + reset);
            assertTrue(reset.toString().contains("\"text\":"), "tokens came before the reset: " + reset);

            final StringBuilder stalled = new StringBuilder();
            final long stallNs = 400_000_000L;
            try (Socket socket = send(server, "stall:400ms@2", USAGE_STREAM))
            {
                final List<long[]> arrivals = readTimed(socket, stalled);
                long widestGapNs = 0;
                for (int i = 1; i < arrivals.size(); i++)
                {
                    widestGapNs = Math.max(widestGapNs, arrivals.get(i)[0] - arrivals.get(i - 1)[0]);
                }
                assertTrue(widestGapNs >= stallNs * 9 / 10, "the stream paused for the stall: widest gap " +
                    widestGapNs / 1_000_000 + " ms");
            }
            assertTrue(stalled.toString().contains("\"completion_tokens\":12") &&
                stalled.toString().contains("data: [DONE]"), "a stalled stream goes on to its end: " + stalled);

            final long sentNs = System.nanoTime();
            final StringBuilder late = new StringBuilder();
            try (Socket socket = send(server, "first-byte:300ms", STREAM))
            {
                final List<long[]> arrivals = readTimed(socket, late);
                assertTrue(arrivals.get(0)[0] - sentNs >= 270_000_000L, "nothing before the first-byte delay");
            }
            assertTrue(late.toString().startsWith("HTTP/1.1 200 OK"), late.toString());
            assertEquals(1, injected(server, "reset"));
            assertEquals(1, injected(server, "stall"));
            assertEquals(1, injected(server, "first-byte"));
        }
    }

    @Test
    void shouldGoUnhealthyAndDownOnSchedule() throws Exception
    {
        final FaultSchedule schedule = FaultSchedule.parse(List.of(
            "t=0s unhealthy for 600ms",
            "t=900ms instance 0 down for 700ms"), "test");
        try (TestServer server = server(new FaultSettings(FaultMix.NONE, false, schedule)))
        {
            final int port = server.ports.get(0);
            assertEquals(503, server.get("/health").statusCode(), "unhealthy from the start");
            assertEquals(200, post(server, null, FULL).statusCode(), "an unhealthy instance still serves");
            waitFor(() -> 200 == server.get("/health").statusCode());
            waitFor(() -> !accepts(port));
            assertThrows(ConnectException.class, () -> new Socket("127.0.0.1", port).close(), "down: refused");
            waitFor(() -> accepts(port));
            assertEquals(200, post(server, null, FULL).statusCode(), "back on the same port");
            assertEquals(1, injected(server, "unhealthy"));
            assertEquals(1, injected(server, "down"));
        }
    }

    @Test
    void shouldStartDownWhenTheScheduleSaysSoFromTheFirstMoment() throws Exception
    {
        final FaultSchedule schedule = FaultSchedule.parse(List.of("t=0s down for 500ms"), "test");
        try (TestServer server = server(new FaultSettings(FaultMix.NONE, false, schedule)))
        {
            final int port = server.ports.get(0);
            assertThrows(ConnectException.class, () -> new Socket("127.0.0.1", port).close(), "down from the start");
            waitFor(() -> accepts(port));
            assertEquals(200, post(server, null, FULL).statusCode(), "listening after the window");
        }
    }

    @Test
    void shouldStallTheEngineOnScheduleAndGoOnWhereItStopped() throws Exception
    {
        final FaultSchedule schedule = FaultSchedule.parse(List.of("t=1500ms stall for 600ms"), "test");
        try (TestServer server = server(new FaultSettings(FaultMix.NONE, false, schedule)))
        {
            final String body = USAGE_STREAM.replace("\"max_tokens\":12", "\"max_tokens\":2000");
            final StringBuilder text = new StringBuilder();
            long widestGapNs = 0;
            try (Socket socket = new Socket("127.0.0.1", server.ports.get(0)))
            {
                socket.setSoTimeout(20_000);
                socket.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: " +
                    "application/json\r\ncontent-length: " + body.length() + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.US_ASCII));
                final List<long[]> arrivals = readTimed(socket, text);
                for (int i = 1; i < arrivals.size(); i++)
                {
                    widestGapNs = Math.max(widestGapNs, arrivals.get(i)[0] - arrivals.get(i - 1)[0]);
                }
            }
            assertTrue(widestGapNs >= 540_000_000L, "no token during the stall: widest gap " +
                widestGapNs / 1_000_000 + " ms");
            assertTrue(text.toString().contains("\"completion_tokens\":2000") && text.toString()
                .contains("data: [DONE]"), "the stream went on to its end");
            assertEquals(1, injected(server, "engine_stall"));
            assertEquals(0, injected(server, "stall"), "no request stall");
        }
    }

    private static boolean accepts(final int port)
    {
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            return socket.isConnected();
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    private interface Check
    {
        boolean holds() throws Exception;
    }

    private static void waitFor(final Check check) throws Exception
    {
        for (int i = 0; i < 2000; i++) // a bound on a hang (20 s), not a timing check
        {
            if (check.holds())
            {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("condition not reached in 20 s");
    }
}
