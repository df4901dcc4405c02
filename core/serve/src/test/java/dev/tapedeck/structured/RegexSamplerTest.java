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
    void shouldRefuseAnExpressionThatCannotBeRead()
    {
        final IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
            () -> RegexSampler.sample("(unclosed", new SeededRandom(1), 8));
        assertTrue(error.getMessage().contains("(unclosed"), error.getMessage());
    }
}
