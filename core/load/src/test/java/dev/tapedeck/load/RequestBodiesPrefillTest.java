package dev.tapedeck.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import dev.tapedeck.tokens.Tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The prefill hop's body next to the request's own: what vLLM's disaggregation proxy would derive from it.
 */
class RequestBodiesPrefillTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void shouldDeriveThePrefillBodyFromTheRequestsOwn() throws Exception
    {
        try (Tokenizer tokenizer = Tokenizer.open(null))
        {
            final RequestBodies bodies = new RequestBodies(RequestBodies.Endpoint.CHAT, "m", true, true, false,
                true, new PromptFactory(PromptWords.of(tokenizer), 1, 16, false));
            final PlannedRequest request = new PlannedRequest(0, 0, 32, 7, null, -1, 0, 0);
            assertNull(bodies.prefillBody(request, UnpooledByteBufAllocator.DEFAULT), "only for two-hop runs");
            bodies.prefillDecode(true);
            final JsonNode own = read(bodies.body(request, UnpooledByteBufAllocator.DEFAULT));
            final JsonNode prefill = read(bodies.prefillBody(request, UnpooledByteBufAllocator.DEFAULT));
            assertEquals(7, own.path("max_tokens").asInt());
            assertTrue(own.path("stream").asBoolean());
            assertTrue(own.has("stream_options"));
            assertFalse(own.has("kv_transfer_params"), "the decode hop gets the prefill's");
            assertEquals(own.path("messages"), prefill.path("messages"), "the same prompt");
            assertEquals("m", prefill.path("model").asText());
            assertTrue(prefill.path("ignore_eos").asBoolean());
            assertEquals(1, prefill.path("max_tokens").asInt());
            assertFalse(prefill.path("stream").asBoolean(true));
            assertFalse(prefill.has("stream_options"));
            assertEquals(JSON.readTree("{\"do_remote_decode\":true,\"do_remote_prefill\":false,\"remote_engine_id\":" +
                "null,\"remote_block_ids\":null,\"remote_host\":null,\"remote_port\":null}"),
                prefill.path("kv_transfer_params"));
            final PlannedRequest other = new PlannedRequest(1, 0, 8, 3, null, -1, 0, 0);
            final JsonNode otherOwn = read(bodies.body(other, UnpooledByteBufAllocator.DEFAULT));
            assertFalse(otherOwn.path("messages").equals(own.path("messages")));
            assertEquals(own.path("messages"),
                read(bodies.prefillBody(request, UnpooledByteBufAllocator.DEFAULT)).path("messages"),
                "a request whose own body was not the last built gets its own prompt");
        }
    }

    private static JsonNode read(final ByteBuf buffer) throws Exception
    {
        try
        {
            return JSON.readTree(buffer.toString(java.nio.charset.StandardCharsets.UTF_8));
        }
        finally
        {
            buffer.release();
        }
    }
}
