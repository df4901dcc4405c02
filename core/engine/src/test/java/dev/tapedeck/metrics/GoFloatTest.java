package dev.tapedeck.metrics;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Values are printed as prometheus_client prints them (Python repr, Go-style exponents for 7+ integer digits).
 */
class GoFloatTest
{
    @Test
    void shouldFormatLikePrometheusClient()
    {
        assertEquals("0.0", GoFloat.format(0));
        assertEquals("1.0", GoFloat.format(1));
        assertEquals("16384.0", GoFloat.format(16384));
        assertEquals("0.001", GoFloat.format(0.001));
        assertEquals("0.0001", GoFloat.format(0.0001));
        assertEquals("1e-05", GoFloat.format(0.00001));
        assertEquals("2.5e-05", GoFloat.format(0.000025));
        assertEquals("0.30000000000000004", GoFloat.format(0.1 + 0.2));
        assertEquals("100000.0", GoFloat.format(100_000));
        assertEquals("999999.0", GoFloat.format(999_999));
        assertEquals("1e+06", GoFloat.format(1_000_000));
        assertEquals("2e+06", GoFloat.format(2_000_000));
        assertEquals("1.234567e+06", GoFloat.format(1_234_567.5));
        assertEquals("1.795261424e+09", GoFloat.format(1_795_261_424.5));
        assertEquals("-3.5", GoFloat.format(-3.5));
        assertEquals("+Inf", GoFloat.format(Double.POSITIVE_INFINITY));
        assertEquals("NaN", GoFloat.format(Double.NaN));
    }

    @Test
    void shouldBuildVllmOneTwoFiveBuckets()
    {
        assertArrayEquals(new double[] {1, 2, 5, 10, 20, 50, 100}, Histogram.oneTwoFive(100));
        assertArrayEquals(new double[] {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000},
            Histogram.oneTwoFive(8192));
    }

    @Test
    void shouldCountObservationsIntoTheFirstBucketThatHoldsThem()
    {
        final Histogram h = new Histogram(new double[] {0.1, 1.0});
        h.observe(0.1);
        h.observe(0.5);
        h.observe(7);
        assertEquals(1, h.bucketCount(0));
        assertEquals(1, h.bucketCount(1));
        assertEquals(1, h.bucketCount(2));
        assertEquals(3, h.count());
        assertEquals(7.6, h.sum(), 1e-9);
    }
}
