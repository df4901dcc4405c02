package dev.tapedeck.load.client;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Reading events and bodies in one pass (text, error, abort, usage), and finding a prefill answer's top-level
 * {@code kv_transfer_params} object in its bytes.
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

    private static int scan(final String json, final Exchange usageInto)
    {
        final byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        return ResponseScanner.scan(bytes, 0, bytes.length, usageInto);
    }

    private static Exchange exchange()
    {
        return new Exchange(0, 0, "/v1/completions", io.netty.buffer.Unpooled.EMPTY_BUFFER, true, 0, null);
    }

    @Test
    void shouldFindTextInEveryFieldServersUseButNotEmptyOrNullText()
    {
        assertEquals(ResponseScanner.TEXT, scan("{\"choices\":[{\"index\":0,\"text\":\"a\"}]}", null));
        assertEquals(ResponseScanner.TEXT, scan("{\"choices\":[{\"delta\":{\"content\": \"b\"}}]}", null));
        assertEquals(ResponseScanner.TEXT, scan("{\"choices\":[{\"delta\":{\"reasoning_content\":\"c\"}}]}", null));
        assertEquals(ResponseScanner.TEXT, scan("{\"choices\":[{\"delta\":{\"reasoning\" : \"d\"}}]}", null));
        assertEquals(0, scan("{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}", null));
        assertEquals(0, scan("{\"choices\":[{\"delta\":{\"content\":null}}]}", null));
        assertEquals(0, scan("{\"choices\":[{\"text\":\"\"}],\"note\":\"\\\"text\\\":\\\"x\\\"\"}", null),
            "a key inside a string value is not a key");
        assertEquals(0, scan("{\"choices\":[\"text\",\"content\"]}", null), "strings in an array are not keys");
    }

    @Test
    void shouldTellErrorsFromChunksThatMentionError()
    {
        assertEquals(ResponseScanner.ERROR, scan("{\"error\":{\"message\":\"bad\",\"code\":400}}", null));
        assertEquals(ResponseScanner.ERROR, scan("{\"error\" : {\"message\":\"bad\"}}", null));
        assertEquals(0, scan("{\"object\":\"text_completion\",\"error\":null}", null), "an envelope with an error key");
        assertEquals(ResponseScanner.TEXT,
            scan("{\"choices\":[{\"text\":\"the \\\"error\\\": key\"}]}", null), "error inside text");
    }

    @Test
    void shouldFindAnAbortedChoice()
    {
        assertEquals(ResponseScanner.ABORT, scan("{\"choices\":[{\"text\":\"\",\"finish_reason\":\"abort\"}]}", null));
        assertEquals(ResponseScanner.ABORT, scan("{\"choices\":[{\"finish_reason\": \"abort\"}]}", null));
        assertEquals(0, scan("{\"choices\":[{\"finish_reason\":\"aborted_by_user\"}]}", null), "not a prefix");
        assertEquals(0, scan("{\"choices\":[{\"finish_reason\":\"length\"}]}", null));
        assertEquals(0, scan("{\"choices\":[{\"finish_reason\":null,\"text\":\"abort\"}]}", null) &
            ResponseScanner.ABORT);
    }

    @Test
    void shouldReadUsageOnlyInsideTheUsageObjectAndOnlyWhenAsked()
    {
        final Exchange exchange = exchange();
        final String body = "{\"choices\":[{\"text\":\"x\"}],\"prompt_tokens\":99," +
            "\"usage\":{\"prompt_tokens\": 12,\"total_tokens\":19,\"completion_tokens\":7}}";
        assertEquals(ResponseScanner.TEXT | ResponseScanner.USAGE, scan(body, exchange));
        assertEquals(12, exchange.usagePromptTokens);
        assertEquals(7, exchange.usageCompletionTokens);

        assertEquals(ResponseScanner.TEXT, scan(body, null), "no exchange: usage left unread");

        final Exchange nullUsage = exchange();
        assertEquals(0, scan("{\"choices\":[],\"usage\":null}", nullUsage));
        assertEquals(-1, nullUsage.usagePromptTokens);
        final Exchange noCompletion = exchange();
        assertEquals(0, scan("{\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":null}}", noCompletion));
        assertEquals(5, noCompletion.usagePromptTokens);
        assertEquals(-1, noCompletion.usageCompletionTokens);
    }

    @Test
    void shouldStopAtAnUnterminatedString()
    {
        assertEquals(0, scan("{\"choices\":[{\"text", null));
        assertNull(params("{\"kv_transfer_params"));
    }
}
