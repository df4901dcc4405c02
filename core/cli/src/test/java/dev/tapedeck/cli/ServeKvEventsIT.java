package dev.tapedeck.cli;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import picocli.CommandLine;

import dev.tapedeck.kvevents.KvEventPublisher;
import dev.tapedeck.serve.Serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve --enable-kv-cache-events} from its flags: one publisher per instance, bound on an ephemeral port, the
 * llm-d topic naming the instance's HTTP port and the model, the encoding of the served vLLM version, and a replay
 * socket per instance.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServeKvEventsIT
{
    @Test
    void shouldStartOnePublisherPerInstanceWithTheLlmdTopic() throws Exception
    {
        final CommandLine cli = Main.commandLine();
        cli.parseArgs("serve", "--port", "0", "--instances", "2", "--model", "my/model", "--enable-kv-cache-events",
            "--kv-events-endpoint", "tcp://127.0.0.1:*", "--kv-events-replay-endpoint", "tcp://127.0.0.1:*",
            "--vllm-version", "0.24.1");
        final ServeCommand serve = cli.getSubcommands().get("serve").getCommand();
        final Serve started = Serve.start(serve.context());
        try
        {
            assertEquals(2, started.kvEventPublishers().size());
            for (int i = 0; i < 2; i++)
            {
                final KvEventPublisher publisher = started.kvEventPublishers().get(i);
                assertEquals("kv@127.0.0.1:" + started.httpServer().ports().get(i) + "@my/model",
                    publisher.settings().topic());
                assertTrue(publisher.endpoint().matches("tcp://127\\.0\\.0\\.1:\\d+"), publisher.endpoint());
                assertTrue(publisher.replayEndpoint().matches("tcp://127\\.0\\.0\\.1:\\d+"),
                    publisher.replayEndpoint());
                assertTrue(publisher.settings().eventsAsMaps(), "0.24 sends map events");
            }
            assertTrue(!started.kvEventPublishers().get(0).endpoint().equals(
                started.kvEventPublishers().get(1).endpoint()), "own socket per instance");
        }
        finally
        {
            started.close();
        }
    }
}
