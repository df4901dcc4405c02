package dev.tapedeck.trace.tools;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.SerializedString;

/**
 * Writes a Chrome trace-event JSON document as it goes: {@code {"traceEvents":[ ... ],"displayTimeUnit":"ms"}},
 * one event per line, straight to the stream (nothing is kept). Times are given in milliseconds and written in
 * microseconds rounded to the nanosecond. Events: {@code M} (metadata: process and thread names and order),
 * {@code X} (a slice with duration) and {@code C} (a counter sample).
 * <p>
 * The caller writes an event's arguments between {@link #beginSlice} and {@link #endSlice} with {@link #json()}.
 * Not thread safe.
 */
final class PerfettoEvents implements Closeable
{
    private static final JsonFactory JSON = new JsonFactory();

    private final JsonGenerator json;
    private long events;

    PerfettoEvents(final OutputStream out) throws IOException
    {
        json = JSON.createGenerator(out, JsonEncoding.UTF8);
        json.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        json.setRootValueSeparator(new SerializedString(",\n"));
        json.writeRaw("{\"traceEvents\":[\n");
    }

    /**
     * @return the generator, for a slice's arguments.
     */
    JsonGenerator json()
    {
        return json;
    }

    /**
     * @return events written so far.
     */
    long events()
    {
        return events;
    }

    /**
     * A metadata event ({@code process_name}, {@code thread_name}, {@code process_sort_index},
     * {@code thread_sort_index}).
     */
    void metadata(final int pid, final int tid, final String name, final String text, final long sortIndex)
        throws IOException
    {
        json.writeStartObject();
        json.writeStringField("ph", "M");
        json.writeNumberField("pid", pid);
        json.writeNumberField("tid", tid);
        json.writeStringField("name", name);
        json.writeObjectFieldStart("args");
        if (null != text)
        {
            json.writeStringField("name", text);
        }
        else
        {
            json.writeNumberField("sort_index", sortIndex);
        }
        json.writeEndObject();
        json.writeEndObject();
        events++;
    }

    /**
     * Start a complete slice; write its arguments' fields with {@link #json()}, then call {@link #endSlice()}. Both
     * ends are rounded to the nanosecond before the duration is taken, so a slice that starts where another ends
     * touches it exactly (overlaps would break the nesting on a track).
     */
    void beginSlice(final int pid, final int tid, final String name, final String category, final String color,
        final double startMs, final double endMs) throws IOException
    {
        final long startNs = Math.round(startMs * 1_000_000.0);
        final long endNs = Math.max(startNs, Math.round(endMs * 1_000_000.0));
        json.writeStartObject();
        json.writeStringField("ph", "X");
        json.writeNumberField("pid", pid);
        json.writeNumberField("tid", tid);
        json.writeStringField("name", name);
        json.writeStringField("cat", category);
        if (null != color)
        {
            json.writeStringField("cname", color);
        }
        json.writeFieldName("ts");
        writeUs(startNs);
        json.writeFieldName("dur");
        writeUs(endNs - startNs);
        json.writeObjectFieldStart("args");
    }

    void endSlice() throws IOException
    {
        json.writeEndObject();
        json.writeEndObject();
        events++;
    }

    /**
     * A counter sample: the series {@code name} of process {@code pid} has {@code value} from {@code atMs} on.
     */
    void counter(final int pid, final String name, final double atMs, final double value) throws IOException
    {
        json.writeStartObject();
        json.writeStringField("ph", "C");
        json.writeNumberField("pid", pid);
        json.writeNumberField("tid", 0);
        json.writeStringField("name", name);
        json.writeFieldName("ts");
        writeUs(Math.round(atMs * 1_000_000.0));
        json.writeObjectFieldStart("args");
        json.writeFieldName(name);
        writeNumber(value);
        json.writeEndObject();
        json.writeEndObject();
        events++;
    }

    /**
     * @param value a number; whole numbers are written without a fraction.
     */
    void writeNumber(final double value) throws IOException
    {
        if (value == Math.rint(value) && Math.abs(value) < 0x1p53)
        {
            json.writeNumber((long)value);
        }
        else
        {
            json.writeNumber(value);
        }
    }

    /**
     * Write nanoseconds as microseconds in plain decimal notation (never {@code 3.5E7}).
     */
    private void writeUs(final long ns) throws IOException
    {
        final long fraction = Math.abs(ns % 1000);
        if (0 == fraction)
        {
            json.writeNumber(ns / 1000);
            return;
        }
        String digits = Long.toString(1000 + fraction).substring(1);
        while (digits.endsWith("0"))
        {
            digits = digits.substring(0, digits.length() - 1);
        }
        json.writeNumber((ns < 0 ? "-" : "") + Math.abs(ns / 1000) + "." + digits);
    }

    /**
     * End the document and flush it (the stream stays open).
     */
    @Override
    public void close() throws IOException
    {
        json.writeRaw("\n],\"displayTimeUnit\":\"ms\"}\n");
        json.flush();
        json.close();
    }

    /**
     * A counter series that writes a sample only when its value changes (a counter holds its value until the next
     * sample, so nothing is lost).
     */
    static final class Series
    {
        private final int pid;
        private final String name;
        private double last = Double.NaN;
        private long samples;

        Series(final int pid, final String name)
        {
            this.pid = pid;
            this.name = name;
        }

        void sample(final PerfettoEvents events, final double atMs, final double value) throws IOException
        {
            if (Double.isNaN(value) || value == last)
            {
                return;
            }
            events.counter(pid, name, atMs, value);
            last = value;
            samples++;
        }

        long samples()
        {
            return samples;
        }
    }
}
