package dev.tapedeck.trace;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * Checks a whole trace file line by line and reports every problem, not just the first: lines that are not JSON,
 * fields of the wrong type, the cross-field rules of {@link TraceValidation}, a meta line anywhere but first, and a
 * {@code config_hash} that is not 64 lowercase hex characters. A line with a JSON or type error is reported once (its
 * other fields cannot be trusted); a well-typed record reports each broken rule. Problems that only keep the trace
 * from being a latency source ({@link TraceValidation#latencyProblems}, e.g. no gaps) are marked as such, so a file
 * can be valid as a workload and not as a latency source ({@link Result#validAsWorkload()}).
 * <p>
 * What {@link TraceReader} tolerates is a warning here, not a problem: a last line cut short without its newline and
 * a gzip stream without its trailer (a capture still being written). Corrupt gzip data ends the check with a
 * problem. Memory does not grow with the file. Stateless; thread safe.
 */
public final class TraceValidator
{
    private static final Pattern CONFIG_HASH = Pattern.compile("[0-9a-f]{64}");

    private TraceValidator()
    {
    }

    /**
     * One problem.
     *
     * @param line 1-based line number.
     * @param message what is wrong.
     * @param latencySourceOnly true when the record is still a valid workload request (only a latency source needs
     *     what it lacks).
     */
    public record Problem(long line, String message, boolean latencySourceOnly)
    {
    }

    /**
     * The outcome of a check.
     *
     * @param records record lines read (valid or not).
     * @param problems problems reported.
     * @param linesWithProblems lines with at least one problem.
     * @param hasMeta true when the file starts with a meta line.
     * @param warnings what was tolerated, each naming the file (and line when known).
     * @param workloadProblems problems that also keep the trace from being replayed as a workload.
     */
    public record Result(long records, long problems, long linesWithProblems, boolean hasMeta, List<String> warnings,
        long workloadProblems)
    {
        /**
         * @return true when no problem was found: the trace is valid as a latency source (and as a workload).
         */
        public boolean valid()
        {
            return 0 == problems;
        }

        /**
         * @return true when every problem found only concerns latency sources: {@code load} can replay the trace.
         */
        public boolean validAsWorkload()
        {
            return 0 == workloadProblems;
        }
    }

    /**
     * Check a trace file.
     *
     * @param path the file (gzip or plain).
     * @param onProblem called for each problem, in line order.
     * @return counts and warnings.
     * @throws IOException if the file cannot be opened or read.
     */
    public static Result validate(final Path path, final Consumer<Problem> onProblem) throws IOException
    {
        final String name = path.toString();
        final Counter counter = new Counter(onProblem);
        final List<String> warnings = new ArrayList<>();
        long records = 0;
        boolean hasMeta = false;
        boolean first = true;
        try (InputStream in = TraceFiles.openInput(path); LineSource lines = new LineSource(in))
        {
            while (true)
            {
                final String line;
                try
                {
                    line = lines.next();
                }
                catch (final java.util.zip.ZipException ex)
                {
                    counter.report(lines.lineNumber() + 1, "corrupt gzip data: " + ex.getMessage() +
                        "; the rest of the file cannot be read", false);
                    break;
                }
                catch (final LineSource.LineTooLongException ex)
                {
                    counter.report(lines.lineNumber() + 1, ex.getMessage(), false);
                    break;
                }
                if (null == line)
                {
                    if (TraceFiles.endedWithoutGzipTrailer(in))
                    {
                        warnings.add(name + ": the gzip stream ends without its trailer (a capture still being " +
                            "written, or interrupted)");
                    }
                    break;
                }
                if (line.isBlank())
                {
                    continue;
                }
                final long lineNumber = lines.lineNumber();
                final boolean cut = !lines.lastLineTerminated() && lines.atEnd();
                final List<String> problems = new ArrayList<>();
                final List<String> latencyProblems = new ArrayList<>();
                final boolean isMeta = checkLine(line, first, problems, latencyProblems);
                if (cut && TraceFiles.couldBeCutRecord(line) && !(problems.isEmpty() && latencyProblems.isEmpty()))
                {
                    warnings.add(name + ":" + lineNumber + ": the last line is cut short (a capture still being " +
                        "written?) and was not checked");
                    break;
                }
                hasMeta |= isMeta && first;
                records += isMeta ? 0 : 1;
                first = false;
                for (final String problem : problems)
                {
                    counter.report(lineNumber, problem, false);
                }
                for (final String problem : latencyProblems)
                {
                    counter.report(lineNumber, problem, true);
                }
            }
        }
        return new Result(records, counter.problems, counter.lines, hasMeta, List.copyOf(warnings),
            counter.workloadProblems);
    }

    /**
     * @param problems gets what breaks the line as a workload request (and so as a latency source).
     * @param latencyProblems gets what only a latency source needs and the record lacks.
     * @return true when the line is a meta line.
     */
    private static boolean checkLine(final String line, final boolean first, final List<String> problems,
        final List<String> latencyProblems) throws IOException
    {
        try
        {
            if (line.contains("\"meta\""))
            {
                final JsonNode node = TraceJson.MAPPER.readTree(line);
                if (null != node && node.isObject() && node.has("meta"))
                {
                    checkMeta(node.get("meta"), first, problems);
                    return true;
                }
            }
            try (JsonParser parser = TraceJson.FACTORY.createParser(line))
            {
                parser.nextToken();
                final TraceRecord record = TraceJson.readRecord(parser);
                if (null != parser.nextToken())
                {
                    problems.add("unexpected content after the record");
                    return false;
                }
                problems.addAll(TraceValidation.workloadProblems(record));
                latencyProblems.addAll(TraceValidation.latencyProblems(record));
            }
        }
        catch (final JsonProcessingException ex)
        {
            problems.add("not valid JSON: " + ex.getOriginalMessage());
        }
        catch (final TraceFormatException ex)
        {
            problems.add(ex.getMessage());
        }
        return false;
    }

    private static void checkMeta(final JsonNode meta, final boolean first, final List<String> problems)
        throws IOException
    {
        if (!first)
        {
            problems.add("a meta line is only allowed as the first line");
        }
        final TraceMeta parsed;
        try (JsonParser parser = TraceJson.MAPPER.treeAsTokens(meta))
        {
            parser.nextToken();
            parsed = TraceJson.readMeta(parser);
        }
        if (null != parsed.configHash() && !CONFIG_HASH.matcher(parsed.configHash()).matches())
        {
            problems.add("meta.config_hash must be 64 lowercase hex characters, got '" + parsed.configHash() + "'");
        }
    }

    /**
     * Counts problems and the lines they are on.
     */
    private static final class Counter
    {
        private final Consumer<Problem> onProblem;
        private long problems;
        private long workloadProblems;
        private long lines;
        private long lastLine = -1;

        Counter(final Consumer<Problem> onProblem)
        {
            this.onProblem = onProblem;
        }

        void report(final long line, final String message, final boolean latencySourceOnly)
        {
            problems++;
            workloadProblems += latencySourceOnly ? 0 : 1;
            if (line != lastLine)
            {
                lines++;
                lastLine = line;
            }
            onProblem.accept(new Problem(line, message, latencySourceOnly));
        }
    }
}
