package dev.tapedeck.testing;

import io.netty.util.ResourceLeakDetector;

/**
 * Runs a measurement with Netty's leak detector off (the build runs tests with it on, paranoid, and its records would
 * count as allocation), restoring the level afterwards. For allocation-counting tests; not for concurrent use.
 */
public final class LeakDetectionOff
{
    /** A measurement that may throw. */
    @FunctionalInterface
    public interface Measurement
    {
        /**
         * @throws Exception if the measurement fails.
         */
        void run() throws Exception;
    }

    private LeakDetectionOff()
    {
    }

    /**
     * @param measurement what to run with the detector off.
     * @throws Exception what the measurement throws.
     */
    public static void during(final Measurement measurement) throws Exception
    {
        final ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        try
        {
            measurement.run();
        }
        finally
        {
            ResourceLeakDetector.setLevel(level);
        }
    }
}
