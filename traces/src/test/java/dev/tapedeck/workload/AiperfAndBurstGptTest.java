package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.trace.TraceFormatException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * AIPerf multi_turn conversations and BurstGPT CSV, on small hand-written files: detection, sizes, timing, sessions,
 * synthetic prefix blocks, skipped rows and {@code file:line} errors.
 */
class AiperfAndBurstGptTest
{
    private static final String FORTY = "You are a terse assistant. Be brief now.";
    private static final String SIXTY_FOUR = "What is machine learning? Explain it with an example, please ok!";

    @TempDir
    Path dir;

    @Test
    void shouldReadAiperfConversationsWithHistoryInEveryPrompt() throws IOException
    {
        assertEquals(40, FORTY.length());
        assertEquals(64, SIXTY_FOUR.length());
        final Path file = write("conversations.jsonl",
            "{\"session_id\":\"chat_1\",\"turns\":[{\"role\":\"system\",\"text\":\"" + FORTY + "\"}," +
                "{\"text\":\"" + SIXTY_FOUR + "\",\"output_length\":10,\"timestamp\":1000}," +
                "{\"text\":\"And now?\",\"delay\":500,\"output_length\":4}]}\n" +
            "{\"session_id\":\"chat_2\",\"turns\":[{\"texts\":[\"abcd\",\"efgh\"],\"timestamp\":250}]}\n" +
            "{\"session_id\":\"chat_1\",\"turns\":[{\"text\":\"Twenty characters ok\",\"timestamp\":3000," +
                "\"output_length\":2}]}\n");
        assertEquals(WorkloadFormat.AIPERF_MULTI_TURN, WorkloadFormat.detect(file));

        final Workload workload = Workloads.load(file);

        assertEquals("aiperf-multi-turn", workload.source());
        assertEquals(16, workload.hashBlockSize());
        assertEquals(2, workload.sessionCount());
        final List<WorkloadRequest> r = workload.requests();
        assertEquals(List.of("chat_2", "chat_1", "chat_1", "chat_1"), r.stream().map(WorkloadRequest::session)
            .toList());
        assertEquals(List.of(0, 0, 1, 2), r.stream().map(WorkloadRequest::turn).toList());
        assertEquals(List.of(0.0, 750.0, 750.0, 2750.0), r.stream().map(WorkloadRequest::arrivalMs).toList());
        assertEquals(List.of(2, 10 + 16, 10 + 16 + 10 + 2, 10 + 16 + 10 + 2 + 4 + 5), r.stream()
            .map(WorkloadRequest::promptTokens).toList(), "system + every earlier turn and answer + this turn's text");
        assertEquals(List.of(WorkloadRequest.UNKNOWN, 10, 4, 2), r.stream().map(WorkloadRequest::outputTokens)
            .toList());
        assertEquals(500.0, r.get(2).thinkMs(), "delay: after the previous answer");
        assertTrue(Double.isNaN(r.get(3).thinkMs()), "timestamp: on the schedule");
        assertArrayEquals(new long[0], r.get(0).hashIds());
        assertArrayEquals(new long[] {0}, r.get(1).hashIds());
        assertArrayEquals(new long[] {0, 1}, r.get(2).hashIds(), "the previous prompt's full blocks, then new ones");
        assertArrayEquals(new long[] {0, 1}, r.get(3).hashIds());
        assertTrue(workload.notes().stream().anyMatch(n -> n.startsWith("1 leading system turns")), workload.notes()
            ::toString);
        assertTrue(workload.notes().stream().anyMatch(n -> n.startsWith("1 turns have no output_length") &&
            n.contains(file + ":2: turns[0]")), workload.notes()::toString);
        assertTrue(workload.notes().stream().anyMatch(n -> n.contains("4 characters per token")), workload.notes()
            ::toString);
    }

    @Test
    void shouldStartConversationsWithoutTimestampsAtZeroAndNoteUnknownAnswers() throws IOException
    {
        final Path file = write("plain.jsonl",
            "{\"turns\":[{\"text\":\"12345678\"},{\"text\":\"abcd\",\"image\":\"cat.png\"}]}\n" +
            "{\"turns\":[{\"text\":\"xy\",\"delay\":40}]}\n");

        final Workload workload = Workloads.load(file, WorkloadFormat.AIPERF_MULTI_TURN);

        assertEquals(List.of(0.0, 0.0, 40.0), workload.requests().stream().map(WorkloadRequest::arrivalMs).toList());
        assertEquals(List.of(2, 3, 1), workload.requests().stream().map(WorkloadRequest::promptTokens).toList());
        assertEquals(2, workload.sessionCount(), "a line without session_id is a conversation of its own");
        assertTrue(workload.notes().stream().anyMatch(n -> n.startsWith("no timestamp: every conversation starts " +
            "at 0 ms")), workload.notes()::toString);
        assertTrue(workload.notes().stream().anyMatch(n -> n.startsWith("1 turns follow an answer without " +
            "output_length") && n.contains(file + ":1: turns[1]")), workload.notes()::toString);
        assertTrue(workload.notes().stream().anyMatch(n -> n.startsWith("1 turns carry images")), workload.notes()
            ::toString);
    }

    @Test
    void shouldNameFileLineAndTurnOfBadAiperfConversations() throws IOException
    {
        expect(WorkloadFormat.AIPERF_MULTI_TURN, write("both.jsonl", "{\"turns\":[{\"text\":\"a\"}]}\n" +
            "{\"turns\":[{\"text\":\"a\",\"timestamp\":5,\"delay\":3}]}\n"),
            ":2: turns[0]: timestamp and delay cannot be set together");
        expect(WorkloadFormat.AIPERF_MULTI_TURN, write("none.jsonl", "{\"turns\":[{\"text\":\"a\"}]}\n" +
            "{\"session_id\":\"s\"}\n"), ":2: turns is missing");
        expect(WorkloadFormat.AIPERF_MULTI_TURN, write("empty.jsonl", "{\"turns\":[]}\n"),
            ":1: turns must be a non-empty array");
        expect(WorkloadFormat.AIPERF_MULTI_TURN, write("back.jsonl", "{\"session_id\":\"s\",\"turns\":[" +
            "{\"text\":\"a\",\"timestamp\":50},{\"text\":\"b\",\"timestamp\":20}]}\n"),
            ":1: turns[1]: timestamp 20 is before the previous turn's 50 in session s");
        expect(WorkloadFormat.AIPERF_MULTI_TURN, write("notext.jsonl", "{\"turns\":[{\"image\":\"cat.png\"}]}\n"),
            ":1: turns[0]: no text to size the prompt by");
        expect(WorkloadFormat.AIPERF_MULTI_TURN, write("texts.jsonl", "{\"turns\":[{\"text\":\"a\",\"texts\":" +
            "[\"b\"]}]}\n"), ":1: turns[0]: text and texts cannot be set together");
    }

    @Test
    void shouldReadBurstGptSkippingFailedRequests() throws IOException
    {
        final Path file = write("BurstGPT_sample.csv", "Timestamp,Model,Request tokens,Response tokens," +
            "Total tokens,Log Type\n" +
            "21.5,ChatGPT,300,100,400,API log\n" +
            "5,ChatGPT,472,18,490,Conversation log\n" +
            "45,GPT-4,1087,0,1087,API log\n" +
            "60,GPT-4,0,10,10,API log\n" +
            "70,ChatGPT,10,5,16,API log\n");
        assertEquals(WorkloadFormat.BURSTGPT, WorkloadFormat.detect(file));

        final Workload workload = Workloads.load(file);

        assertEquals("burstgpt", workload.source());
        assertEquals(0, workload.hashBlockSize());
        assertEquals(List.of(0.0, 16_500.0, 65_000.0), workload.requests().stream().map(WorkloadRequest::arrivalMs)
            .toList(), "seconds to milliseconds, sorted, from the earliest row");
        assertEquals(List.of(472, 300, 10), workload.requests().stream().map(WorkloadRequest::promptTokens).toList());
        assertEquals(List.of(18, 100, 5), workload.requests().stream().map(WorkloadRequest::outputTokens).toList());
        assertNull(workload.requests().get(0).hashIds());
        assertEquals(0, workload.sessionCount());
        final List<String> notes = workload.notes();
        assertTrue(notes.stream().anyMatch(n -> n.startsWith("1 rows have Response tokens 0 (failed requests)") &&
            n.contains(file + ":4")), notes::toString);
        assertTrue(notes.stream().anyMatch(n -> n.startsWith("1 rows have Request tokens 0") &&
            n.contains(file + ":5")), notes::toString);
        assertTrue(notes.stream().anyMatch(n -> n.startsWith("1 rows have a Total tokens") &&
            n.contains(file + ":6")), notes::toString);
        assertTrue(notes.stream().anyMatch(n -> n.contains("not in arrival order")), notes::toString);
        assertTrue(notes.stream().anyMatch(n -> n.startsWith("Timestamp is in seconds")), notes::toString);
    }

    @Test
    void shouldMakeSessionsOfBurstGptSessionIds() throws IOException
    {
        final Path file = write("sessions.csv", "\"Timestamp\",\"Session ID\",\"Model\",\"Request tokens\"," +
            "\"Response tokens\",\"Total tokens\",\"Log Type\",\"Elapsed time\"\n" +
            "10,s1,ChatGPT,200,20,220,Conversation log,1.5\n" +
            "11,s2,ChatGPT,100,10,110,Conversation log,0.5\n" +
            "5,s1,ChatGPT,100,30,130,Conversation log,2.0\n" +
            "12,,GPT-4,50,5,55,API log,0.1\n");

        final Workload workload = Workloads.load(file);

        assertEquals(WorkloadFormat.BURSTGPT, WorkloadFormat.detect(file));
        assertEquals(2, workload.sessionCount());
        assertEquals(List.of(100, 200, 100, 50), workload.requests().stream().map(WorkloadRequest::promptTokens)
            .toList());
        assertEquals("s1", workload.requests().get(0).session());
        assertEquals(0, workload.requests().get(0).turn());
        assertEquals("s1", workload.requests().get(1).session());
        assertEquals(1, workload.requests().get(1).turn(), "turns in Timestamp order, not file order");
        assertNull(workload.requests().get(3).session(), "an empty Session ID is an independent request");
    }

    @Test
    void shouldNameFileAndLineOfBadBurstGptRows() throws IOException
    {
        expect(WorkloadFormat.BURSTGPT, write("t.csv", "Timestamp,Request tokens,Response tokens\n1,2,3\nabc,1,2\n"),
            ":3: Timestamp must be a non-negative number of seconds, got 'abc'");
        expect(WorkloadFormat.BURSTGPT, write("r.csv", "Timestamp,Request tokens,Response tokens\n1,-3,2\n"),
            ":2: Request tokens must be a non-negative integer, got '-3'");
        expect(WorkloadFormat.BURSTGPT, write("c.csv", "Timestamp,Request tokens,Response tokens\n1,2\n"),
            ":2: expected 3 columns, got 2");
        expect(WorkloadFormat.BURSTGPT, write("h.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"),
            ":1: expected the BurstGPT header");
    }

    private static void expect(final WorkloadFormat format, final Path file, final String expected)
    {
        final TraceFormatException error = assertThrows(TraceFormatException.class,
            () -> Workloads.load(file, format), file.toString());
        assertTrue(error.getMessage().startsWith(file.toString()), error.getMessage());
        assertTrue(error.getMessage().contains(expected), error.getMessage());
    }

    private Path write(final String name, final String content) throws IOException
    {
        final Path file = dir.resolve(name);
        Files.writeString(file, content);
        return file;
    }
}
