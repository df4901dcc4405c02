package dev.tapedeck.structured;

import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.tapedeck.latency.SeededRandom;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RegexSampler}'s strings match the expression as Java's own regex engine reads it (Python's syntax agrees
 * on these), over many seeds.
 */
class RegexSamplerTest
{
    @ParameterizedTest
    @ValueSource(strings = {
        "^\\d{3}-\\d{4}$", "(yes|no|maybe)", "[A-Z][a-z]+ [A-Z][a-z]+", "\\w+@\\w+\\.(com|org)",
        "(?:ab)+c?", "[0-9a-f]{8}", "\"quoted\" <tag> #1 @home", "x.*?y", "\\s*\\S+\\s*",
        "[\\]a]x", "[\\-a]{3}", "[a-]+", "(a*)*b", "()c|d", "[^\\d\\s]{4}", "\\u0041\\x42?", "[\\w.-]+@x{2,}",
        "[\\S]{3}", "[\\D][\\W]",
    })
    void shouldSampleStringsThatMatch(final String regex)
    {
        final Pattern pattern = Pattern.compile(regex);
        final Set<String> distinct = new HashSet<>();
        for (int seed = 0; seed < 200; seed++)
        {
            final String sample = RegexSampler.sample(regex, new SeededRandom(seed), 40);
            assertTrue(pattern.matcher(sample).matches(), "seed " + seed + ": '" + sample + "' !~ " + regex);
            distinct.add(sample);
        }
        assertTrue(distinct.size() > 1 || regex.startsWith("\""), "samples vary: " + distinct);
    }

    @Test
    void shouldRefuseAnExpressionThatCannotBeReadOrDrawnNamingWhy()
    {
        for (final String[] refused : new String[][] {
            {"(unclosed", "missing ')'"},
            {"(?=a)b", "lookarounds"},
            {"(a)\\1", "backreferences"},
            {"a{1000000}", "repetition counts above 1000"},
            {"[z-a]", "out of order"},
            {"(".repeat(100) + ")".repeat(100), "nested deeper"},
            {"(a{1000}){1000}", "longer than 65536"},
            {"((((){1000}){1000}){1000}){1000}", "too much work"},
            {"[\\Sa]", "inside a class with other members"},
        })
        {
            final IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
                () -> RegexSampler.sample(refused[0], new SeededRandom(1), 8), refused[0]);
            assertTrue(error.getMessage().contains(refused[1]), refused[0] + " -> " + error.getMessage());
        }
    }

    @Test
    void shouldDrawFromExpressionsWhoseAutomatonWouldExplode()
    {
        // a deterministic automaton of this has 2^16 states (minutes with an automaton library); drawing is linear
        final String regex = "(a|b)*a(a|b){16}";
        final Pattern pattern = Pattern.compile(regex);
        for (int seed = 0; seed < 100; seed++)
        {
            final String sample = RegexSampler.sample(regex, new SeededRandom(seed), 40);
            assertTrue(pattern.matcher(sample).matches(), sample);
        }
        assertTrue(Pattern.matches("[a-z]{1000}", RegexSampler.sample("[a-z]{1000}", new SeededRandom(2), 8)));
    }
}
