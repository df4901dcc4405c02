package dev.tapedeck.http;

import java.util.ArrayDeque;
import java.util.List;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A large body is parsed and tokenized off the event loop: while it waits for (or takes) the preparer, the other
 * connections' streams keep stepping, and the large request is admitted, or refused in vLLM's words, when it is ready.
 * The preparer here holds its tasks until the test runs them.
 */
class OffLoopAdmissionTest
{
    private static String bigChat(final String model)
    {
        return "{\"model\":\"" + model + "\",\"max_tokens\":3,\"messages\":[{\"role\":\"user\",\"content\":\"" +
            "word ".repeat(CompletionAdmission.OFFLOAD_BODY_BYTES / 5 + 100) + "\"}]}";
    }

    private static int tokenEvents(final EmbeddedChannel channel)
    {
        return (int)EmbeddedServe.writes(channel).stream().filter(w -> new String(w).contains("\"text\":")).count();
    }

    @Test
    void shouldKeepStreamingWhileALargeRequestIsPrepared()
    {
        final ArrayDeque<Runnable> held = new ArrayDeque<>();
        try (EmbeddedServe serve = new EmbeddedServe(EmbeddedServe.options(ServeOptions.Mode.RANDOM)
            .maxRequestBodyBytes(1 << 20), EmbeddedServe.engine().maxModelLen(32_768), new ByteTokenizer(), held::add))
        {
            final EmbeddedChannel streaming = serve.connect();
            EmbeddedServe.send(streaming, EmbeddedServe.post("/v1/completions",
                "{\"prompt\":[97],\"max_tokens\":100,\"ignore_eos\":true,\"stream\":true}"));
            final EmbeddedChannel big = serve.connect();
            EmbeddedServe.send(big, EmbeddedServe.post("/v1/chat/completions", bigChat(EmbeddedServe.MODEL)) +
                EmbeddedServe.post("/v1/completions", "{\"prompt\":[98],\"max_tokens\":1}"));
            serve.runTasks();
            assertEquals(1, held.size(), "the large body went to the preparer, the small one behind it waits");
            for (int i = 0; i < 20; i++)
            {
                serve.step();
            }
            assertTrue(tokenEvents(streaming) >= 19, "the other stream kept going");
            assertEquals(List.of(), EmbeddedServe.responses(big), "nothing yet for the large request");

            held.poll().run();
            serve.runUntilIdle();
            final List<HttpWire.Response> answers = EmbeddedServe.responses(big);
            assertEquals(2, answers.size(), "the large request, then the one pipelined behind it");
            assertEquals(200, answers.get(0).status());
            assertTrue(StreamWire.json(answers.get(0).text()).at("/usage/prompt_tokens").asInt() > 3000);
            assertEquals(200, answers.get(1).status());
        }
    }

    @Test
    void shouldRefuseAPreparedRequestInVllmsOrder()
    {
        final ArrayDeque<Runnable> held = new ArrayDeque<>();
        try (EmbeddedServe serve = new EmbeddedServe(EmbeddedServe.options(ServeOptions.Mode.ECHO)
            .maxRequestBodyBytes(1 << 20), EmbeddedServe.engine(), new ByteTokenizer(), held::add))
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, EmbeddedServe.post("/v1/chat/completions", bigChat("nope")));
            serve.runTasks();
            held.poll().run();
            serve.runTasks();
            final HttpWire.Response response = EmbeddedServe.responses(client).get(0);
            assertEquals(404, response.status(), "the unknown model first, before the prompt's length: " +
                response.text());
            assertTrue(client.isOpen());
            EmbeddedServe.send(client, EmbeddedServe.post("/v1/chat/completions", bigChat(EmbeddedServe.MODEL)));
            serve.runTasks();
            held.poll().run();
            serve.runTasks();
            final HttpWire.Response tooLong = EmbeddedServe.responses(client).get(0);
            assertEquals(400, tooLong.status(), "over the context of " + EmbeddedServe.MAX_MODEL_LEN + " tokens");
            assertTrue(tooLong.text().contains("maximum context length"), tooLong.text());
        }
    }
}
