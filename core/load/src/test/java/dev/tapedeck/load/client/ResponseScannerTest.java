package dev.tapedeck.load.client;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Finding a prefill answer's top-level {@code kv_transfer_params} object in its bytes.
 */
class ResponseScannerTest
{
    private static String params(final String json)
    {
        final byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        final long found = ResponseScanner.kvTransferParams(bytes, 0, bytes.length);
        return found < 0 ? null : new String(bytes, (int)(found >>> 32), (int)found - (int)(found >>> 32),
            StandardCharsets.UTF_8);
    }

    @Test
    void shouldFindTheTopLevelObjectVerbatim()
    {
        final String value = "{\"do_remote_prefill\":true,\"remote_block_ids\":[1,[2]],\"s\":\"} \\\" {\"," +
            "\"nested\":{\"a\":{}}}";
        assertEquals(value, params("{\"id\":\"x\",\"choices\":[{\"text\":\"\"}],\"kv_transfer_params\":" + value +
            ",\"usage\":{}}"));
        assertEquals(value, params("{\"kv_transfer_params\" : \n " + value + "}"), "spaces around the colon");
    }

    @Test
    void shouldIgnoreTheKeyWhenNullNestedInStringsOrUnterminated()
    {
        assertEquals(null, params("{\"id\":\"x\",\"kv_transfer_params\":null}"));
        assertEquals(null, params("{\"id\":\"x\"}"));
        assertEquals(null, params("{\"choices\":[{\"kv_transfer_params\":{\"a\":1}}]}"), "nested deeper");
        assertEquals(null, params("{\"text\":\"\\\"kv_transfer_params\\\":{}\"}"), "inside a string");
        assertEquals(null, params("{\"kv_transfer_params\":{\"a\":[1,2}"), "cut short");
        assertEquals(null, params("{\"kv_transfer_params\":\"{}\"}"), "a string, not an object");
    }
}
