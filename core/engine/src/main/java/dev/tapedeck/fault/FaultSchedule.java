package dev.tapedeck.fault;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.tapedeck.latency.Durations;

/**
 * A timeline of instance faults ({@code --fault-schedule FILE}): one event per line,
 * <pre>
 * t=DURATION [instance N | all] ACTION [ARGS] [for DURATION]
 * </pre>
 * where the time counts from the start of the run and ACTION is one of
 * <ul>
 *     <li>{@code unhealthy}: {@code /health} answers 503;</li>
 *     <li>{@code down}: the instance stops listening and resets its connections (requests in flight are lost), then
 *     listens again on the same port with an empty KV cache, as a restarted pod;</li>
 *     <li>{@code stall}: the engine takes no steps (every stream of the instance pauses);</li>
 *     <li>{@code failures PERCENT FAULTS}: that share of requests get one of the faults ({@link RequestFault});</li>
 *     <li>{@code kv-events drop} or {@code kv-events delay DURATION}: KV-event batches are lost, or held back;</li>
 *     <li>{@code die} and {@code dead} (engine core, {@code play}): the process exits, or reports the engine dead to
 *     the frontend and stops answering.</li>
 * </ul>
 * Without {@code for} a fault lasts until the end of the run. {@code #} starts a comment. Immutable.
 *
 * @param events the events in file order.
 */
public record FaultSchedule(List<Event> events)
{
    /** An empty schedule. */
    public static final FaultSchedule NONE = new FaultSchedule(List.of());

    /** What an instance fault does. */
    public enum Action
    {
        /** {@code /health} answers 503. */
        UNHEALTHY("unhealthy"),
        /** The port closes and its connections are reset. */
        DOWN("down"),
        /** The engine takes no steps. */
        STALL("stall"),
        /** A share of requests get request faults. */
        FAILURES("failures"),
        /** KV-event batches are dropped. */
        KV_EVENTS_DROP("kv-events drop"),
        /** KV-event batches are delayed. */
        KV_EVENTS_DELAY("kv-events delay"),
        /** The engine-core process exits. */
        DIE("die"),
        /** The engine core reports itself dead and stops answering. */
        DEAD("dead");

        private final String label;

        Action(final String label)
        {
            this.label = label;
        }

        /**
         * @return the action as written in the file.
         */
        public String label()
        {
            return label;
        }

        /**
         * @return the {@code fault} label of the metric: {@code engine_stall} (a request's stall is {@code stall}),
         *     {@code kv_events_drop}, the label otherwise.
         */
        public String metricLabel()
        {
            return STALL == this ? "engine_stall" : label.replace(' ', '_').replace('-', '_');
        }
    }

    /**
     * One line of the schedule.
     *
     * @param atNs when it starts, from the start of the run.
     * @param instance the instance it hits, -1 for all.
     * @param action what happens.
     * @param forNs how long it lasts, {@link Long#MAX_VALUE} for the rest of the run.
     * @param mix for {@link Action#FAILURES}: the share of requests and their faults; {@link FaultMix#NONE} otherwise.
     * @param delayNs for {@link Action#KV_EVENTS_DELAY}: how long each batch is held back.
     * @param line the line number in the file, for messages.
     */
    public record Event(long atNs, int instance, Action action, long forNs, FaultMix mix, long delayNs, int line)
    {
        /**
         * @param index an instance index.
         * @return true if this event hits it.
         */
        public boolean hits(final int index)
        {
            return instance < 0 || instance == index;
        }

        /**
         * @return when it ends, from the start of the run ({@link Long#MAX_VALUE} for never).
         */
        public long endNs()
        {
            return Long.MAX_VALUE == forNs ? Long.MAX_VALUE : atNs + forNs;
        }
    }

    /**
     * Validates and copies the list.
     */
    public FaultSchedule
    {
        events = List.copyOf(events);
    }

    /**
     * @param file the schedule file.
     * @return the schedule.
     * @throws IllegalArgumentException as {@code FILE:LINE: what is wrong}, or naming the file when it cannot be read.
     */
    public static FaultSchedule read(final Path file)
    {
        final List<String> lines;
        try
        {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        }
        catch (final IOException | RuntimeException ex)
        {
            throw new IllegalArgumentException(file + ": cannot read the fault schedule: " + ex.getMessage(), ex);
        }
        return parse(lines, file.toString());
    }

    /**
     * @param lines the schedule's lines.
     * @param source the file name, for messages.
     * @return the schedule.
     * @throws IllegalArgumentException as {@code SOURCE:LINE: what is wrong}.
     */
    public static FaultSchedule parse(final List<String> lines, final String source)
    {
        final List<Event> events = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++)
        {
            final int hash = lines.get(i).indexOf('#');
            final String text = (hash < 0 ? lines.get(i) : lines.get(i).substring(0, hash)).trim();
            if (text.isEmpty())
            {
                continue;
            }
            try
            {
                events.add(parseLine(text.toLowerCase(Locale.ROOT).split("\\s+"), i + 1));
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IllegalArgumentException(source + ":" + (i + 1) + ": " + ex.getMessage(), ex);
            }
        }
        return new FaultSchedule(events);
    }

    private static Event parseLine(final String[] words, final int line)
    {
        int w = 0;
        if (!words[w].startsWith("t="))
        {
            throw new IllegalArgumentException("a line starts with t=DURATION, e.g. 't=60s instance 3 unhealthy " +
                "for 20s'");
        }
        final long atNs = duration(words[w++].substring(2), "t=");
        int instance = -1;
        if (w < words.length && "instance".equals(words[w]))
        {
            instance = instanceIndex(w + 1 < words.length ? words[w + 1] : "");
            w += 2;
        }
        else if (w < words.length && "all".equals(words[w]))
        {
            w++;
        }
        int end = words.length;
        long forNs = Long.MAX_VALUE;
        if (end - w >= 2 && "for".equals(words[end - 2]))
        {
            forNs = duration(words[end - 1], "for");
            end -= 2;
        }
        if (w >= end)
        {
            throw new IllegalArgumentException("missing the fault (unhealthy, down, stall, failures, kv-events, die, " +
                "dead)");
        }
        final String action = words[w++];
        final int args = end - w;
        switch (action)
        {
            case "unhealthy":
                return simple(Action.UNHEALTHY, args, atNs, instance, forNs, line);
            case "down":
                return simple(Action.DOWN, args, atNs, instance, forNs, line);
            case "stall":
                return simple(Action.STALL, args, atNs, instance, forNs, line);
            case "die":
                return simple(Action.DIE, args, atNs, instance, forNs, line);
            case "dead":
                return simple(Action.DEAD, args, atNs, instance, forNs, line);
            case "failures":
                return failures(words, w, end, atNs, instance, forNs, line);
            case "kv-events":
                return kvEvents(words, w, end, atNs, instance, forNs, line);
            default:
                throw new IllegalArgumentException("unknown fault '" + action + "' (expected unhealthy, down, stall, " +
                    "failures, kv-events, die or dead)");
        }
    }

    private static Event simple(final Action action, final int args, final long atNs, final int instance,
        final long forNs, final int line)
    {
        if (args > 0)
        {
            throw new IllegalArgumentException("'" + action.label + "' takes no arguments (only 'for DURATION')");
        }
        return new Event(atNs, instance, action, forNs, FaultMix.NONE, 0, line);
    }

    private static Event failures(final String[] words, final int from, final int end, final long atNs,
        final int instance, final long forNs, final int line)
    {
        if (from >= end || !words[from].endsWith("%"))
        {
            throw new IllegalArgumentException("'failures' needs a share, e.g. 'failures 30% rate_limit,reset@5'");
        }
        final double percent;
        try
        {
            percent = Double.parseDouble(words[from].substring(0, words[from].length() - 1));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("'" + words[from] + "' is not a percentage");
        }
        final String types = String.join(",", java.util.Arrays.copyOfRange(words, from + 1, end));
        return new Event(atNs, instance, Action.FAILURES, forNs, FaultMix.of(percent, types), 0, line);
    }

    private static Event kvEvents(final String[] words, final int from, final int end, final long atNs,
        final int instance, final long forNs, final int line)
    {
        if (end - from == 1 && "drop".equals(words[from]))
        {
            return new Event(atNs, instance, Action.KV_EVENTS_DROP, forNs, FaultMix.NONE, 0, line);
        }
        if (end - from == 2 && "delay".equals(words[from]))
        {
            return new Event(atNs, instance, Action.KV_EVENTS_DELAY, forNs, FaultMix.NONE,
                duration(words[from + 1], "delay"), line);
        }
        throw new IllegalArgumentException("expected 'kv-events drop' or 'kv-events delay DURATION'");
    }

    private static int instanceIndex(final String word)
    {
        try
        {
            final int index = Integer.parseInt(word);
            if (index >= 0)
            {
                return index;
            }
        }
        catch (final NumberFormatException ex)
        {
            // reported below
        }
        throw new IllegalArgumentException("'instance' needs an index >= 0, got '" + word + "'");
    }

    private static long duration(final String text, final String what)
    {
        try
        {
            return Durations.parseNs(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException(what + ": " + ex.getMessage());
        }
    }

    /**
     * Refuse a schedule with faults a face cannot inject.
     *
     * @param allowed the faults the face can inject.
     * @param face the face, for the message (e.g. {@code serve}).
     * @throws IllegalArgumentException naming the first line whose fault is not allowed.
     */
    public void requireOnly(final java.util.Set<Action> allowed, final String face)
    {
        for (final Event event : events)
        {
            if (!allowed.contains(event.action))
            {
                throw new IllegalArgumentException("--fault-schedule line " + event.line + ": '" + event.action.label +
                    "' cannot be injected by " + face);
            }
            if ((Action.DIE == event.action || Action.DEAD == event.action) && Long.MAX_VALUE != event.forNs)
            {
                throw new IllegalArgumentException("--fault-schedule line " + event.line + ": '" + event.action.label +
                    "' lasts for the rest of the run (no 'for')");
            }
        }
    }

    /**
     * @param action an action.
     * @return true if some event of this schedule does it.
     */
    public boolean has(final Action action)
    {
        for (final Event event : events)
        {
            if (event.action == action)
            {
                return true;
            }
        }
        return false;
    }
}
