package dev.tapedeck.load;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Generated open-loop plans ({@code --rate R --duration T --arrivals ...}): seeded, with the count and mean rate
 * within statistical bounds (4 standard deviations, so a correct generator fails about once in 15,000 seeds; the
 * seeds are fixed, so the tests are deterministic) and the burstiness the arrival process asks for.
 */
class LoadPlanTest
{
    private static final LengthDistribution PROMPT = LengthDistribution.parse("100");
    private static final LengthDistribution OUTPUT = LengthDistribution.parse("10");

    private static double[] gapsS(final LoadPlan plan)
    {
        final List<PlannedRequest> r = plan.requests();
        final double[] gaps = new double[r.size() - 1];
        for (int i = 1; i < r.size(); i++)
        {
            gaps[i - 1] = (r.get(i).offsetNs() - r.get(i - 1).offsetNs()) / 1e9;
        }
        return gaps;
    }

    private static double mean(final double[] values)
    {
        double sum = 0;
        for (final double v : values)
        {
            sum += v;
        }
        return sum / values.length;
    }

    private static double cv(final double[] values)
    {
        final double m = mean(values);
        double squares = 0;
        for (final double v : values)
        {
            squares += (v - m) * (v - m);
        }
        return Math.sqrt(squares / (values.length - 1)) / m;
    }

    /**
     * A renewal process of rate R over T seconds has about R x T arrivals with variance R x T x CV^2.
     */
    private static void assertRate(final String arrivals, final double cv, final long seed)
    {
        final double rate = 50;
        final double seconds = 120;
        final LoadPlan plan = LoadPlan.fromRate(rate, ArrivalProcess.parse(arrivals), seconds, PROMPT, OUTPUT, seed, 0);
        final int count = plan.requests().size();
        final double expected = rate * seconds;
        final double sd = Math.sqrt(expected) * cv;
        assertTrue(Math.abs(count - expected) <= 4 * sd, arrivals + ": " + count + " arrivals, expected " + expected);
        final double[] gaps = gapsS(plan);
        final double meanGapSd = cv / rate / Math.sqrt(gaps.length);
        assertEquals(1 / rate, mean(gaps), 4 * meanGapSd, arrivals + ": the mean gap is 1/rate");
        assertEquals(cv, cv(gaps), 0.15 * cv, arrivals + ": the gaps' coefficient of variation");
        assertTrue(plan.requests().get(count - 1).offsetNs() < seconds * 1e9, "every arrival within the duration");
        for (int i = 1; i < count; i++)
        {
            assertTrue(plan.requests().get(i).offsetNs() >= plan.requests().get(i - 1).offsetNs(), "in order");
            assertEquals(i, plan.requests().get(i).index());
        }
    }

    @Test
    void shouldGeneratePoissonArrivalsAtTheRate()
    {
        for (long seed = 1; seed <= 5; seed++)
        {
            assertRate("poisson", 1.0, seed);
        }
    }

    @Test
    void shouldGenerateGammaArrivalsWithTheirBurstiness()
    {
        assertRate("gamma:2", 2.0, 11);
        assertRate("gamma:0.5", 0.5, 12);
        assertRate("gamma:4", 4.0, 13);
    }

    @Test
    void shouldGenerateConstantArrivalsExactly()
    {
        final LoadPlan plan = LoadPlan.fromRate(20, ArrivalProcess.parse("constant"), 3, PROMPT, OUTPUT, 0, 0);
        assertEquals(60, plan.requests().size(), "20/s for 3 s: 60 requests, the first at 0");
        for (final PlannedRequest r : plan.requests())
        {
            assertEquals(r.index() * 50_000_000L, r.offsetNs());
        }
    }

    @Test
    void shouldBeSeededAndCapped()
    {
        final LoadPlan a = LoadPlan.fromRate(100, ArrivalProcess.parse("poisson"), 10, LengthDistribution.parse(
            "10..1000"), OUTPUT, 42, 0);
        final LoadPlan b = LoadPlan.fromRate(100, ArrivalProcess.parse("poisson"), 10, LengthDistribution.parse(
            "10..1000"), OUTPUT, 42, 0);
        assertEquals(a.requests().size(), b.requests().size());
        for (int i = 0; i < a.requests().size(); i++)
        {
            assertEquals(a.requests().get(i).offsetNs(), b.requests().get(i).offsetNs());
            assertEquals(a.requests().get(i).promptTokens(), b.requests().get(i).promptTokens());
        }
        final LoadPlan capped = LoadPlan.fromRate(100, ArrivalProcess.parse("poisson"), 10, LengthDistribution.parse(
            "10..1000"), OUTPUT, 42, 25);
        assertEquals(25, capped.requests().size());
        assertEquals(a.requests().get(24).offsetNs(), capped.requests().get(24).offsetNs(), "the same first 25");
    }

    @Test
    void shouldRefuseBadArrivalsAndRates()
    {
        assertThrows(IllegalArgumentException.class, () -> ArrivalProcess.parse("gamma:x"));
        assertThrows(IllegalArgumentException.class, () -> ArrivalProcess.parse("gamma:0"));
        assertThrows(IllegalArgumentException.class, () -> ArrivalProcess.parse("bursty"));
        assertThrows(IllegalArgumentException.class, () -> LoadPlan.fromRate(0, ArrivalProcess.parse("poisson"), 10,
            PROMPT, OUTPUT, 0, 0));
    }
}
