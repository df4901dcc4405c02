package dev.tapedeck.structured;

import java.util.ArrayList;
import java.util.List;

import dev.tapedeck.latency.SeededRandom;

/**
 * Writes a random string that fully matches a regular expression: {@code structured_outputs.regex} and a JSON
 * Schema's {@code pattern}. The expression (Python's {@code re} syntax, as vLLM takes it; anchored, as vLLM's grammar
 * backends match the whole output) is parsed into a tree and a string is drawn from the tree directly: an
 * alternation picks a branch, a quantifier a count (from its minimum to a few more, or its maximum), a class a member
 * (printable ASCII where it allows). Drawing is linear in the string drawn, whatever the expression: no automaton is
 * built, so no expression can make it blow up.
 * <p>
 * Understood: literals and escapes, {@code .}, classes with ranges and negation, {@code \d \w \s \D \W \S}, groups
 * ({@code (?:..)}, named groups), alternation, {@code * + ? {n} {n,} {n,m}} and their lazy and possessive forms,
 * anchors {@code ^ $ \A \Z \b} (matched trivially). Refused with the reason: lookarounds, backreferences, repetition
 * counts over {@value #MAX_COUNT}, expressions longer than {@value #MAX_PATTERN_CHARS} characters or nested deeper
 * than {@value #MAX_DEPTH}, and draws longer than {@value #MAX_OUTPUT_CHARS} characters.
 * <p>
 * Stateless; safe to share.
 */
public final class RegexSampler
{
    static final int MAX_COUNT = 1000;
    static final int MAX_PATTERN_CHARS = 4096;
    static final int MAX_DEPTH = 64;
    static final int MAX_OUTPUT_CHARS = 65_536;
    static final int MAX_STEPS = 1_000_000;

    private RegexSampler()
    {
    }

    /** A node of the expression's tree. */
    private sealed interface Node permits Literal, CharClass, Sequence, Alternation, Repeat
    {
    }

    private record Literal(char value) implements Node
    {
    }

    /** A set of characters as ranges, possibly negated. */
    private record CharClass(List<char[]> ranges, boolean negated) implements Node
    {
    }

    private record Sequence(List<Node> items) implements Node
    {
    }

    private record Alternation(List<Node> branches) implements Node
    {
    }

    private record Repeat(Node item, int min, int max) implements Node
    {
    }

    /**
     * @param pattern the regular expression.
     * @param random the request's random source.
     * @param softMaxLength how long an open-ended repetition may make the string, roughly (minimums may pass it).
     * @return a matching string.
     * @throws IllegalArgumentException naming what cannot be read or drawn.
     */
    public static String sample(final String pattern, final SeededRandom random, final int softMaxLength)
    {
        final Node root = parse(pattern);
        final StringBuilder out = new StringBuilder();
        draw(root, random, Math.max(1, softMaxLength), out, pattern, new int[1]);
        return out.toString();
    }

    /**
     * @param pattern a regular expression.
     * @throws IllegalArgumentException when it cannot be read.
     */
    static void check(final String pattern)
    {
        parse(pattern);
    }

    private static Node parse(final String pattern)
    {
        if (pattern.length() > MAX_PATTERN_CHARS)
        {
            throw new IllegalArgumentException("the regular expression is longer than " + MAX_PATTERN_CHARS +
                " characters");
        }
        final Parser parser = new Parser(pattern);
        final Node root = parser.alternation(0);
        if (parser.at < pattern.length())
        {
            throw parser.error("unbalanced ')'");
        }
        return root;
    }

    private static void draw(final Node node, final SeededRandom random, final int softMax, final StringBuilder out,
        final String pattern, final int[] steps)
    {
        // the work is bounded, not only the string: repeats of what draws nothing would otherwise multiply unseen
        if (out.length() > MAX_OUTPUT_CHARS || ++steps[0] > MAX_STEPS)
        {
            throw new IllegalArgumentException("the regular expression '" + abbreviate(pattern) + "' needs strings " +
                "longer than " + MAX_OUTPUT_CHARS + " characters, or too much work, to draw");
        }
        if (node instanceof Literal literal)
        {
            out.append(literal.value());
        }
        else if (node instanceof CharClass set)
        {
            out.append(member(set, random));
        }
        else if (node instanceof Sequence sequence)
        {
            for (final Node item : sequence.items())
            {
                draw(item, random, softMax, out, pattern, steps);
            }
        }
        else if (node instanceof Alternation alternation)
        {
            draw(alternation.branches().get(random.nextInt(alternation.branches().size())), random, softMax, out,
                pattern, steps);
        }
        else
        {
            final Repeat repeat = (Repeat)node;
            final int room = out.length() >= softMax ? 0 : 3;
            final int upper = Math.min(repeat.max(), repeat.min() + room);
            final int count = repeat.min() + random.nextInt(upper - repeat.min() + 1);
            for (int i = 0; i < count; i++)
            {
                draw(repeat.item(), random, softMax, out, pattern, steps);
            }
        }
    }

    private static char member(final CharClass set, final SeededRandom random)
    {
        if (!set.negated())
        {
            final char[] range = set.ranges().get(random.nextInt(set.ranges().size()));
            final char low = (char)Math.max(range[0], 0x20);
            final char high = (char)Math.min(range[1], 0x7e);
            if (low <= high)
            {
                return (char)(low + random.nextInt(high - low + 1));
            }
            return range[0];
        }
        for (int tries = 0; tries < 256; tries++)
        {
            final char candidate = (char)(0x20 + random.nextInt(0x7f - 0x20));
            if (!contains(set, candidate))
            {
                return candidate;
            }
        }
        for (char c = 0x20; c < 0xd800; c++)
        {
            if (!contains(set, c))
            {
                return c;
            }
        }
        throw new IllegalArgumentException("a negated class excludes every character");
    }

    private static boolean contains(final CharClass set, final char c)
    {
        for (final char[] range : set.ranges())
        {
            if (c >= range[0] && c <= range[1])
            {
                return true;
            }
        }
        return false;
    }

    private static String abbreviate(final String pattern)
    {
        return pattern.length() <= 40 ? pattern : pattern.substring(0, 40) + "...";
    }

    /** A recursive-descent reader of one expression. */
    private static final class Parser
    {
        private final String pattern;
        private int at;

        Parser(final String pattern)
        {
            this.pattern = pattern;
        }

        IllegalArgumentException error(final String what)
        {
            return new IllegalArgumentException("cannot read the regular expression '" + abbreviate(pattern) +
                "' at " + at + ": " + what);
        }

        Node alternation(final int depth)
        {
            if (depth > MAX_DEPTH)
            {
                throw error("nested deeper than " + MAX_DEPTH);
            }
            final List<Node> branches = new ArrayList<>(1);
            branches.add(sequence(depth));
            while (at < pattern.length() && '|' == pattern.charAt(at))
            {
                at++;
                branches.add(sequence(depth));
            }
            return 1 == branches.size() ? branches.get(0) : new Alternation(branches);
        }

        private Node sequence(final int depth)
        {
            final List<Node> items = new ArrayList<>();
            while (at < pattern.length() && '|' != pattern.charAt(at) && ')' != pattern.charAt(at))
            {
                final Node atom = atom(depth);
                if (null != atom)
                {
                    items.add(quantified(atom));
                }
            }
            return 1 == items.size() ? items.get(0) : new Sequence(items);
        }

        /** An atom, or null for an anchor (matched by the empty string here). */
        private Node atom(final int depth)
        {
            final char c = pattern.charAt(at++);
            switch (c)
            {
                case '^', '$':
                    return null;
                case '.':
                    return new CharClass(List.of(new char[] {0x20, 0x7e}), false);
                case '[':
                    return charClass();
                case '(':
                    return group(depth);
                case '\\':
                    return escape(false);
                case '*', '+', '?':
                    throw error("nothing to repeat");
                case '{':
                    if (isQuantifier(at - 1))
                    {
                        throw error("nothing to repeat");
                    }
                    return new Literal(c); // not a quantifier: a literal brace, as Python reads it
                default:
                    return new Literal(c);
            }
        }

        private Node group(final int depth)
        {
            if (pattern.startsWith("?:", at))
            {
                at += 2;
            }
            else if (pattern.startsWith("?P<", at) || (pattern.startsWith("?<", at) && !pattern.startsWith("?<=", at) &&
                !pattern.startsWith("?<!", at)))
            {
                at = pattern.indexOf('>', at) + 1;
                if (0 == at)
                {
                    throw error("unterminated group name");
                }
            }
            else if (pattern.startsWith("?", at))
            {
                throw error("lookarounds, flags and other (?...) groups are not supported");
            }
            final Node inside = alternation(depth + 1);
            if (at >= pattern.length() || ')' != pattern.charAt(at))
            {
                throw error("missing ')'");
            }
            at++;
            return inside;
        }

        private Node quantified(final Node atom)
        {
            if (at >= pattern.length())
            {
                return atom;
            }
            final char c = pattern.charAt(at);
            final int min;
            final int max;
            if ('*' == c || '+' == c || '?' == c)
            {
                at++;
                min = '+' == c ? 1 : 0;
                max = '?' == c ? 1 : Integer.MAX_VALUE;
            }
            else if ('{' == c && isQuantifier(at))
            {
                final String[] bounds = pattern.substring(at + 1, pattern.indexOf('}', at)).split(",", -1);
                at = pattern.indexOf('}', at) + 1;
                min = bounds[0].isEmpty() ? 0 : count(bounds[0]);
                max = 1 == bounds.length ? min : bounds[1].isEmpty() ? Integer.MAX_VALUE : count(bounds[1]);
                if (max < min)
                {
                    throw error("a repetition's maximum is below its minimum");
                }
            }
            else
            {
                return atom;
            }
            if (at < pattern.length() && ('?' == pattern.charAt(at) || '+' == pattern.charAt(at)))
            {
                at++; // lazy or possessive: the same strings
            }
            return quantified(new Repeat(atom, min, max));
        }

        /** {@code {n}}, {@code {n,}}, {@code {n,m}} or {@code {,m}} at {@code from}; anything else is literal. */
        private boolean isQuantifier(final int from)
        {
            final int close = pattern.indexOf('}', from);
            return close > from && pattern.substring(from + 1, close).matches("\\d+(,\\d*)?|,\\d+");
        }

        private int count(final String digits)
        {
            if (digits.length() > 4 || Integer.parseInt(digits) > MAX_COUNT)
            {
                throw error("repetition counts above " + MAX_COUNT + " are not supported");
            }
            return Integer.parseInt(digits);
        }

        private Node charClass()
        {
            final boolean negated = at < pattern.length() && '^' == pattern.charAt(at);
            if (negated)
            {
                at++;
            }
            final List<char[]> ranges = new ArrayList<>();
            boolean first = true;
            while (true)
            {
                if (at >= pattern.length())
                {
                    throw error("missing ']'");
                }
                char c = pattern.charAt(at++);
                if (']' == c && !first)
                {
                    break;
                }
                first = false;
                if ('\\' == c)
                {
                    final Node escaped = escape(true);
                    if (escaped instanceof CharClass set && set.negated())
                    {
                        // [\S] is \S; a negated shorthand among other members is not drawn here
                        if (ranges.isEmpty() && !negated && at < pattern.length() && ']' == pattern.charAt(at))
                        {
                            at++;
                            return set;
                        }
                        throw error("\\D, \\W and \\S inside a class with other members are not supported");
                    }
                    if (escaped instanceof CharClass set)
                    {
                        ranges.addAll(set.ranges());
                        continue;
                    }
                    c = ((Literal)escaped).value();
                }
                if (at + 1 < pattern.length() && '-' == pattern.charAt(at) && ']' != pattern.charAt(at + 1))
                {
                    at++;
                    char high = pattern.charAt(at++);
                    if ('\\' == high)
                    {
                        final Node escaped = escape(true);
                        if (!(escaped instanceof Literal literal))
                        {
                            throw error("a class shorthand cannot end a range");
                        }
                        high = literal.value();
                    }
                    if (high < c)
                    {
                        throw error("a range out of order");
                    }
                    ranges.add(new char[] {c, high});
                }
                else
                {
                    ranges.add(new char[] {c, c});
                }
            }
            if (ranges.isEmpty())
            {
                throw error("an empty class");
            }
            return new CharClass(ranges, negated);
        }

        /** The escape after a backslash: a shorthand class, or a literal. */
        private Node escape(final boolean inClass)
        {
            if (at >= pattern.length())
            {
                throw error("a trailing backslash");
            }
            final char c = pattern.charAt(at++);
            switch (c)
            {
                case 'd':
                    return new CharClass(List.of(new char[] {'0', '9'}), false);
                case 'D':
                    return new CharClass(List.of(new char[] {'0', '9'}), true);
                case 'w':
                    return new CharClass(List.of(new char[] {'a', 'z'}, new char[] {'A', 'Z'}, new char[] {'0', '9'},
                        new char[] {'_', '_'}), false);
                case 'W':
                    return new CharClass(List.of(new char[] {'a', 'z'}, new char[] {'A', 'Z'}, new char[] {'0', '9'},
                        new char[] {'_', '_'}), true);
                case 's':
                    return new CharClass(List.of(new char[] {' ', ' '}), false);
                case 'S':
                    return new CharClass(List.of(new char[] {0, ' '}), true);
                case 'n':
                    return new Literal('\n');
                case 't':
                    return new Literal('\t');
                case 'r':
                    return new Literal('\r');
                case 'u', 'x':
                {
                    final int digits = 'u' == c ? 4 : 2;
                    if (at + digits > pattern.length() || !pattern.substring(at, at + digits).matches("[0-9a-fA-F]+"))
                    {
                        throw error("\\" + c + " needs " + digits + " hex digits");
                    }
                    final char value = (char)Integer.parseInt(pattern.substring(at, at + digits), 16);
                    at += digits;
                    return new Literal(value);
                }
                case 'A', 'Z', 'b', 'B':
                    if (inClass)
                    {
                        throw error("\\" + c + " inside a class");
                    }
                    return new Sequence(List.of()); // anchors and boundaries: matched by the empty string
                default:
                    if (Character.isDigit(c))
                    {
                        throw error("backreferences are not supported");
                    }
                    if (Character.isLetter(c))
                    {
                        throw error("the escape \\" + c + " is not supported");
                    }
                    return new Literal(c);
            }
        }
    }
}
