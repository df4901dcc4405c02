package dev.tapedeck.structured;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dk.brics.automaton.Automaton;
import dk.brics.automaton.RegExp;
import dk.brics.automaton.State;
import dk.brics.automaton.Transition;

import dev.tapedeck.latency.SeededRandom;

/**
 * Writes a random string that matches a regular expression: {@code guided_regex}/{@code structured_outputs.regex}
 * and a JSON Schema's {@code pattern}. The expression (Python's {@code re} syntax, as vLLM takes it; anchored, as
 * vLLM's grammar backends match the whole output) is translated to dk.brics.automaton's syntax ({@code \d \w \s},
 * {@code (?:}, lazy quantifiers, {@code ^ $}), compiled to a minimal automaton, and walked at random: up to a target
 * length the walk takes any transition that can still reach an accepting state, then the shortest way to one.
 * Characters are printable ASCII where the transition allows it.
 * <p>
 * Stateless; safe to share.
 */
public final class RegexSampler
{
    private RegexSampler()
    {
    }

    /**
     * @param pattern the regular expression.
     * @param random the request's random source.
     * @param maxLength a soft bound on the length (the shortest completion may pass it).
     * @return a matching string.
     * @throws IllegalArgumentException if the expression cannot be read or matches nothing.
     */
    public static String sample(final String pattern, final SeededRandom random, final int maxLength)
    {
        final Automaton automaton = compile(pattern);
        final Map<State, Integer> distance = distanceToAccept(automaton);
        if (!distance.containsKey(automaton.getInitialState()))
        {
            throw new IllegalArgumentException("the regular expression '" + pattern + "' matches no string");
        }
        final int target = 1 + random.nextInt(Math.max(1, Math.min(maxLength, 48)));
        final StringBuilder out = new StringBuilder();
        State state = automaton.getInitialState();
        while (true)
        {
            if (state.isAccept() && (out.length() >= target || state.getTransitions().isEmpty() ||
                random.nextInt(8) == 0))
            {
                return out.toString();
            }
            final List<Transition> live = new ArrayList<>();
            Transition nearest = null;
            for (final Transition transition : state.getTransitions())
            {
                final Integer d = distance.get(transition.getDest());
                if (null == d)
                {
                    continue;
                }
                live.add(transition);
                if (null == nearest || d < distance.get(nearest.getDest()))
                {
                    nearest = transition;
                }
            }
            final Transition step = out.length() >= target ? nearest : live.get(random.nextInt(live.size()));
            out.append(pick(step.getMin(), step.getMax(), random));
            state = step.getDest();
        }
    }

    /**
     * @param pattern a regular expression in Python's syntax.
     * @return its automaton.
     * @throws IllegalArgumentException if it cannot be read.
     */
    static Automaton compile(final String pattern)
    {
        try
        {
            final Automaton automaton = new RegExp(translate(pattern), RegExp.NONE).toAutomaton();
            automaton.minimize();
            return automaton;
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException("cannot read the regular expression '" + pattern + "': " +
                ex.getMessage(), ex);
        }
    }

    private static char pick(final char min, final char max, final SeededRandom random)
    {
        final char low = (char)Math.max(min, 0x20);
        final char high = (char)Math.min(max, 0x7e);
        if (low <= high)
        {
            return (char)(low + random.nextInt(high - low + 1));
        }
        return min;
    }

    /**
     * Fewest characters from each state to an accepting one; states that cannot reach one are absent.
     */
    private static Map<State, Integer> distanceToAccept(final Automaton automaton)
    {
        final Map<State, List<State>> incoming = new HashMap<>();
        for (final State state : automaton.getStates())
        {
            for (final Transition transition : state.getTransitions())
            {
                incoming.computeIfAbsent(transition.getDest(), s -> new ArrayList<>()).add(state);
            }
        }
        final Map<State, Integer> distance = new HashMap<>();
        final java.util.ArrayDeque<State> queue = new java.util.ArrayDeque<>();
        for (final State state : automaton.getAcceptStates())
        {
            distance.put(state, 0);
            queue.add(state);
        }
        while (!queue.isEmpty())
        {
            final State state = queue.poll();
            for (final State from : incoming.getOrDefault(state, List.of()))
            {
                if (!distance.containsKey(from))
                {
                    distance.put(from, distance.get(state) + 1);
                    queue.add(from);
                }
            }
        }
        return distance;
    }

    /**
     * Python {@code re} to dk.brics syntax: shorthand classes spelled out, non-capturing groups and lazy quantifiers
     * made plain, anchors dropped (the whole string matches), and the characters brics reads as operators quoted.
     */
    static String translate(final String pattern)
    {
        final StringBuilder out = new StringBuilder(pattern.length() + 16);
        boolean inClass = false;
        for (int i = 0; i < pattern.length(); i++)
        {
            final char c = pattern.charAt(i);
            if ('\\' == c && i + 1 < pattern.length())
            {
                final char next = pattern.charAt(++i);
                final String shorthand = shorthand(next, inClass);
                out.append(null != shorthand ? shorthand : "\\" + next);
                continue;
            }
            if (inClass)
            {
                if (']' == c)
                {
                    inClass = false;
                }
                out.append('"' == c ? "\\\"" : String.valueOf(c));
                continue;
            }
            switch (c)
            {
                case '[' ->
                {
                    inClass = true;
                    out.append(c);
                }
                case '^', '$' ->
                {
                    // anchors: the whole output matches anyway
                }
                case '(' ->
                {
                    out.append('(');
                    if (pattern.startsWith("?:", i + 1))
                    {
                        i += 2;
                    }
                }
                case '?', '*', '+' ->
                {
                    out.append(c);
                    if (i + 1 < pattern.length() && '?' == pattern.charAt(i + 1))
                    {
                        i++; // lazy: the same strings
                    }
                }
                case '.' -> out.append("[ -~]");
                case '"', '<', '>', '#', '@', '&', '~' -> out.append('\\').append(c);
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    private static String shorthand(final char letter, final boolean inClass)
    {
        final String body = switch (letter)
        {
            case 'd' -> "0-9";
            case 'w' -> "a-zA-Z0-9_";
            case 's' -> " \t\n";
            case 'D' -> "a-zA-Z";
            case 'W' -> " .,;:!";
            case 'S' -> "a-zA-Z0-9";
            default -> null;
        };
        if (null == body)
        {
            return switch (letter)
            {
                case 'n' -> "\n";
                case 't' -> "\t";
                default -> null;
            };
        }
        return inClass ? body : "[" + body + "]";
    }
}
