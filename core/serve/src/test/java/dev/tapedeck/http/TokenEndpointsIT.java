package dev.tapedeck.http;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code /tokenize}, {@code /detokenize} and {@code /v1/embeddings} on real sockets, against the served tokenizer and
 * chat template: counts agree with what a completion reports, detokenize inverts tokenize, embeddings are
 * deterministic unit vectors of the asked dimension in either encoding.
 */
@Timeout(60)
class TokenEndpointsIT
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode ok(final TestServer server, final String path, final String body) throws Exception
    {
        final java.net.http.HttpResponse<String> response = server.post(path, body);
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }

    @Test
    void shouldTokenizeAndDetokenizeWithTheServedTokenizerAndTemplate() throws Exception
    {
        try (TestServer server = TestServer.start())
        {
            final JsonNode tokens = ok(server, "/tokenize", "{\"model\":\"" + TestServer.MODEL +
                "\",\"prompt\":\"hello tokenizer world\",\"return_token_strs\":true}");
            final int[] expected = TestServer.tokenizer().encode("hello tokenizer world");
            assertEquals(expected.length, tokens.get("count").asInt());
            final int[] got = new int[tokens.get("tokens").size()];
            for (int i = 0; i < got.length; i++)
            {
                got[i] = tokens.get("tokens").get(i).asInt();
            }
            assertArrayEquals(expected, got);
            assertTrue(tokens.get("max_model_len").asInt() > 0);
            final StringBuilder joined = new StringBuilder();
            tokens.get("token_strs").forEach(s -> joined.append(s.asText()));
            assertEquals("hello tokenizer world", joined.toString());
            assertEquals("hello tokenizer world", ok(server, "/detokenize", "{\"tokens\":" + tokens.get("tokens") +
                "}").get("prompt").asText(), "detokenize inverts tokenize");

            final String messages = "[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\"," +
                "\"content\":\"what is a token?\"}]";
            final int chatCount = ok(server, "/tokenize", "{\"messages\":" + messages + "}").get("count").asInt();
            final JsonNode chat = ok(server, "/v1/chat/completions", "{\"model\":\"" + TestServer.MODEL +
                "\",\"max_tokens\":2,\"messages\":" + messages + "}");
            assertEquals(chat.get("usage").get("prompt_tokens").asInt(), chatCount,
                "the chat template is applied as for a chat completion");

            assertEquals(400, server.post("/tokenize", "{\"prompt\":\"a\",\"messages\":" + messages + "}")
                .statusCode());
            final JsonNode withImage = ok(server, "/v1/chat/completions", "{\"model\":\"" + TestServer.MODEL +
                "\",\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":" +
                "\"what is a token?\"},{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://x/a.png\"}}]}]}");
            assertTrue(withImage.get("usage").get("prompt_tokens").asInt() > chatCount + 128,
                "an image is served, counted as placeholder tokens: " + withImage.get("usage"));
            assertTrue(server.post("/detokenize", "{\"tokens\":[99999999]}").body().contains("out of vocabulary"));
            assertEquals(405, server.get("/tokenize").statusCode());
        }
    }

    @Test
    void shouldAnswerEmbeddingsWithDeterministicUnitVectors() throws Exception
    {
        try (TestServer server = TestServer.start())
        {
            final JsonNode one = ok(server, "/v1/embeddings", "{\"model\":\"" + TestServer.MODEL +
                "\",\"input\":\"the same text\"}");
            final JsonNode vector = one.get("data").get(0).get("embedding");
            assertEquals(384, vector.size(), "llm-d-inference-sim's default dimension");
            double norm = 0;
            for (final JsonNode v : vector)
            {
                norm += v.asDouble() * v.asDouble();
            }
            assertEquals(1.0, norm, 1e-4, "a unit vector");
            assertEquals(TestServer.tokenizer().encode("the same text").length,
                one.get("usage").get("prompt_tokens").asInt());
            assertEquals(vector, ok(server, "/v1/embeddings", "{\"input\":\"the same text\"}").get("data").get(0)
                .get("embedding"), "deterministic");

            final JsonNode two = ok(server, "/v1/embeddings", "{\"input\":[\"first\",\"second\"],\"dimensions\":16," +
                "\"encoding_format\":\"base64\"}");
            assertEquals(2, two.get("data").size());
            assertEquals(1, two.get("data").get(1).get("index").asInt());
            final ByteBuffer first = ByteBuffer.wrap(Base64.getDecoder().decode(two.get("data").get(0)
                .get("embedding").asText())).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(16 * 4, first.remaining());
            final JsonNode floats = ok(server, "/v1/embeddings", "{\"input\":\"first\",\"dimensions\":16}")
                .get("data").get(0).get("embedding");
            for (int i = 0; i < 16; i++)
            {
                assertEquals(floats.get(i).floatValue(), first.getFloat(), 1e-7, "base64 holds the same floats");
            }
            assertNotEquals(two.get("data").get(0).get("embedding"), two.get("data").get(1).get("embedding"));
            final JsonNode ids = ok(server, "/v1/embeddings", "{\"input\":[[1,2,3],[4,5]]}");
            assertEquals(5, ids.get("usage").get("prompt_tokens").asInt());
            assertEquals(400, server.post("/v1/embeddings", "{\"input\":\"x\",\"dimensions\":0}").statusCode());
            assertEquals(400, server.post("/v1/embeddings", "{\"input\":[]}").statusCode());
            final String many = "[" + "\"w\",".repeat(2048) + "\"w\"]";
            assertTrue(server.post("/v1/embeddings", "{\"input\":" + many + "}").body()
                .contains("at most 2048 inputs"));
            assertEquals(400, server.post("/v1/embeddings", "{\"input\":[" + "\"w\",".repeat(64) + "\"w\"]," +
                "\"dimensions\":65536}").statusCode(), "inputs times dimensions are bounded");
            assertEquals(404, server.post("/v1/embeddings", "{\"model\":\"nope\",\"input\":\"x\"}").statusCode());
            assertEquals(400, server.post("/detokenize", "{\"tokens\":[1.5]}").statusCode());
            assertEquals(400, server.post("/detokenize", "{\"tokens\":[1]} trailing").statusCode());
        }
    }

    @Test
    void shouldAnswerLargeBodiesFromAnAdmissionThreadWithTheSameCounts() throws Exception
    {
        try (TestServer server = TestServer.start())
        {
            final String text = "a long document about tokens and caches ".repeat(600);
            assertTrue(text.length() > 16 * 1024, "above the size that is prepared off the event loop");
            final JsonNode tokens = ok(server, "/tokenize", "{\"prompt\":\"" + text + "\"}");
            assertEquals(TestServer.tokenizer().encode(text).length, tokens.get("count").asInt());
            assertEquals(text, ok(server, "/detokenize", "{\"tokens\":" + tokens.get("tokens") + "}")
                .get("prompt").asText());
            final String many = "[" + "\"one input among many\",".repeat(1500) + "\"last\"]";
            final JsonNode embeddings = ok(server, "/v1/embeddings", "{\"input\":" + many + ",\"dimensions\":8}");
            assertEquals(1501, embeddings.get("data").size());
            assertEquals(1500L * TestServer.tokenizer().encode("one input among many").length +
                TestServer.tokenizer().encode("last").length, embeddings.get("usage").get("prompt_tokens").asLong());
            assertEquals(400, server.post("/v1/embeddings", "{\"input\":" + many + ",\"dimensions\":0}")
                .statusCode(), "a refusal prepared off the loop is still a 400");
            assertEquals(200, server.post("/v1/embeddings", "{\"input\":\"after\"}").statusCode(),
                "the connection's loop serves the next request");
        }
    }
}
