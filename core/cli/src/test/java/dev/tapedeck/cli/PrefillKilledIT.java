package dev.tapedeck.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A prefill process killed after it handed out its params, as the shaded jar runs: the decode already knows the
 * prefill (its handshake and data connection are cached from an earlier pull), so the next pull fails in the data
 * plane, not the side channel. The decode answers that request with {@code finish_reason} {@code error}
 * ({@code kv_load_failure_policy=fail}, vLLM's default), counts it in {@code vllm:nixl_num_failed_transfers_total},
 * and goes on serving.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class PrefillKilledIT
{
    private static final Pattern LISTENING = Pattern.compile("on (http://127\\.0\\.0\\.1:(\\d+))");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CONFIG = "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}";
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private record Server(Process process, String url)
    {
    }

    private static Server start(final String engineId) throws IOException
    {
        final String jar = System.getProperty("tapedeck.test.jar");
        assertTrue(null != jar && Files.isRegularFile(Path.of(jar)), "the shaded jar is built before ITs: " + jar);
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
            .toString(), "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-jar", jar, "serve", "--port",
            "0", "--step-base", "2ms", "--kv-cache-size", "1024", "--kv-transfer-config",
            CONFIG.replace("}", ",\"engine_id\":\"" + engineId + "\"}"), "--kv-data-plane", "tcp",
            "--side-channel-port", "0"));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final BufferedReader output = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8));
        final List<String> log = new ArrayList<>();
        String line;
        while (null != (line = output.readLine()))
        {
            log.add(line);
            final Matcher m = LISTENING.matcher(line);
            if (m.find())
            {
                final Thread pump = new Thread(() -> output.lines().forEach(l -> { }));
                pump.setDaemon(true);
                pump.start();
                return new Server(process, m.group(1));
            }
        }
        throw new AssertionError("serve exited before listening: " + log);
    }

    private JsonNode post(final Server server, final String body) throws Exception
    {
        final HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create(server.url() +
            "/v1/completions")).timeout(Duration.ofSeconds(30)).header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }

    private JsonNode prefill(final Server prefill, final String prompt) throws Exception
    {
        return post(prefill, "{\"prompt\":\"" + prompt + "\",\"max_tokens\":1,\"kv_transfer_params\":" +
            "{\"do_remote_decode\":true}}").get("kv_transfer_params");
    }

    private JsonNode decode(final Server decode, final String prompt, final JsonNode params) throws Exception
    {
        return post(decode, "{\"prompt\":\"" + prompt + "\",\"max_tokens\":4,\"kv_transfer_params\":" +
            JSON.writeValueAsString(params) + "}");
    }

    private double metric(final Server server, final String name) throws Exception
    {
        for (final String line : client.send(HttpRequest.newBuilder(URI.create(server.url() + "/metrics")).build(),
            HttpResponse.BodyHandlers.ofString()).body().split("\n"))
        {
            if (line.startsWith(name + "{"))
            {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return Double.NaN;
    }

    @Test
    void aPullFromAKilledPrefillFailsTheRequestAndIsCounted() throws Exception
    {
        final Server prefill = start("prefill-killed");
        final Server decode = start("decode-survivor");
        try
        {
            final String first = "the first prompt, pulled while the prefill lives ".repeat(6);
            assertEquals("length", decode(decode, first, prefill(prefill, first)).at("/choices/0/finish_reason")
                .asText());
            assertEquals(0.0, metric(decode, "vllm:nixl_num_failed_transfers_total"));

            final String second = "the second prompt, whose prefill dies before the pull ".repeat(6);
            final JsonNode params = prefill(prefill, second);
            prefill.process().destroyForcibly();
            assertTrue(prefill.process().waitFor(30, TimeUnit.SECONDS));

            final JsonNode failed = decode(decode, second, params);
            assertEquals("error", failed.at("/choices/0/finish_reason").asText(), failed.toString());
            assertEquals(1.0, metric(decode, "vllm:nixl_num_failed_transfers_total"));
            final JsonNode plain = post(decode, "{\"prompt\":\"still serving\",\"max_tokens\":2}");
            assertEquals(2, plain.at("/usage/completion_tokens").asInt(), "the decode goes on");
        }
        finally
        {
            prefill.process().destroyForcibly();
            decode.process().destroyForcibly();
        }
    }
}
