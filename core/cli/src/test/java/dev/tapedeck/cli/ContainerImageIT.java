package dev.tapedeck.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The container image Jib writes ({@code -Pimage}, {@code target/jib-image.tar}; {@code .ci/run} builds it): its
 * config (entrypoint, default command, user, exposed ports, layers) and its own entrypoint command run from the
 * extracted layers, with this JVM's {@code java} standing in for the base image's (the paths under {@code /app} and
 * the image's environment moved to where the layers were extracted, the port left for the server to choose),
 * answering a real completion, {@code /health} and {@code /metrics}. Skipped with a printed reason when the image
 * was not built.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ContainerImageIT
{
    private static final Path IMAGE = Path.of("target/jib-image.tar");
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void shouldBeANonRootServeImageThatAnswersFromItsOwnEntrypoint() throws Exception
    {
        if (!Files.isRegularFile(IMAGE))
        {
            System.out.println("ContainerImageIT skipped: " + IMAGE.toAbsolutePath() + " was not built " +
                "(./mvnw verify -Pimage -Djib.from.image=scratch builds it; .ci/run does)");
            Assumptions.abort("no image tarball");
        }
        final Path unpacked = Files.createDirectories(dir.resolve("image"));
        run(List.of("tar", "-xf", IMAGE.toAbsolutePath().toString(), "-C", unpacked.toString()));
        final JsonNode manifest = JSON.readTree(unpacked.resolve("manifest.json").toFile()).get(0);
        assertTrue(manifest.get("RepoTags").toString().contains("tapedeck:latest"), manifest.toString());
        final JsonNode config = JSON.readTree(unpacked.resolve(manifest.get("Config").asText()).toFile())
            .get("config");
        assertEquals("65532:65532", config.get("User").asText(), "non-root");
        assertTrue(config.get("ExposedPorts").has("8000/tcp"), "vLLM's port");
        assertTrue(config.get("ExposedPorts").has("5557/tcp") && config.get("ExposedPorts").has("5600/tcp"),
            "KV events and the P/D side channel");
        assertEquals("[\"serve\",\"--host=0.0.0.0\",\"--port=8000\"]", config.get("Cmd").toString(),
            "serve by default on vLLM's port");
        final List<String> entrypoint = new ArrayList<>();
        config.get("Entrypoint").forEach(e -> entrypoint.add(e.asText()));
        assertEquals("java", entrypoint.get(0));
        assertEquals("dev.tapedeck.cli.Main", entrypoint.get(entrypoint.size() - 1));
        assertTrue(manifest.get("Layers").size() >= 3, "dependencies, resources and classes in their own layers: " +
            manifest.get("Layers"));
        assertEquals("/tmp", config.get("WorkingDir").asText(), "a directory a non-root user can write");
        assertTrue(config.get("Env").toString().contains("HOME=/tmp"), config.get("Env").toString());

        final Path root = Files.createDirectories(dir.resolve("root"));
        for (final JsonNode layer : manifest.get("Layers"))
        {
            run(List.of("tar", "-xzf", unpacked.resolve(layer.asText()).toString(), "-C", root.toString()));
        }
        final Path classpathFile = root.resolve("app/jib-classpath-file");
        assertTrue(Files.isRegularFile(classpathFile), "Jib's classpath file under /app");
        final Path movedClasspath = dir.resolve("classpath");
        Files.writeString(movedClasspath, Files.readString(classpathFile).replace("/app/", root + "/app/"));
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String arg : entrypoint.subList(1, entrypoint.size()))
        {
            command.add("@/app/jib-classpath-file".equals(arg) ? "@" + movedClasspath : arg);
        }
        // a free port chosen by the server itself (no race with another process), read from its start-up line
        config.get("Cmd").forEach(c -> command.add("--port=8000".equals(c.asText()) ? "--port=0" : c.asText()));
        final Path workingDir = Files.createDirectories(root.resolve(config.get("WorkingDir").asText().substring(1)));
        final ProcessBuilder builder = new ProcessBuilder(command).directory(workingDir.toFile())
            .redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile());
        for (final JsonNode env : config.get("Env"))
        {
            final String[] pair = env.asText().split("=", 2);
            builder.environment().put(pair[0], pair[1].startsWith("/") ? root + pair[1] : pair[1]);
        }
        final Process server = builder.start();
        try
        {
            final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            final String base = "http://127.0.0.1:" + awaitPort(server);
            awaitHealthy(client, base, server);
            final HttpResponse<String> completion = client.send(HttpRequest.newBuilder(URI.create(base +
                "/v1/completions")).header("content-type", "application/json").POST(HttpRequest.BodyPublishers
                .ofString("{\"model\":\"Qwen/Qwen3-8B\",\"prompt\":\"hello from a container\",\"max_tokens\":4}"))
                .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, completion.statusCode(), completion.body());
            assertEquals(4, JSON.readTree(completion.body()).at("/usage/completion_tokens").asInt());
            final HttpResponse<String> metrics = client.send(HttpRequest.newBuilder(URI.create(base + "/metrics"))
                .build(), HttpResponse.BodyHandlers.ofString());
            assertTrue(metrics.body().contains("vllm:request_success_total"), "metrics wired");
        }
        finally
        {
            server.destroy();
            if (!server.waitFor(20, TimeUnit.SECONDS))
            {
                server.destroyForcibly();
            }
        }
        assertEquals(false, server.isAlive());
    }

    /** The port from the server's start-up line ({@code ... on http://0.0.0.0:PORT ...}). */
    private int awaitPort(final Process server) throws Exception
    {
        final java.util.regex.Pattern url = java.util.regex.Pattern.compile("on https?://[^ ]*:(\\d+)");
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadlineNs)
        {
            final java.util.regex.Matcher m = url.matcher(Files.readString(dir.resolve("server.log")));
            if (m.find())
            {
                return Integer.parseInt(m.group(1));
            }
            assertTrue(server.isAlive(), "the image's command exited: " + Files.readString(dir.resolve("server.log")));
            Thread.sleep(100);
        }
        throw new AssertionError("no start-up line within 60 s: " + Files.readString(dir.resolve("server.log")));
    }

    private void awaitHealthy(final HttpClient client, final String base, final Process server) throws Exception
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadlineNs)
        {
            assertTrue(server.isAlive(), "the image's command exited: " + Files.readString(dir.resolve("server.log")));
            try
            {
                if (200 == client.send(HttpRequest.newBuilder(URI.create(base + "/health")).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode())
                {
                    return;
                }
            }
            catch (final IOException ex)
            {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new AssertionError("not healthy within 60 s: " + Files.readString(dir.resolve("server.log")));
    }

    private static void run(final List<String> command) throws Exception
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, process.exitValue(), command + ": " + out);
    }
}
