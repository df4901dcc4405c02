package dev.tapedeck.load;

import java.util.List;

/**
 * What one run measured, merged over the client's event loops.
 *
 * @param label the run's name ({@code run}, {@code concurrency=8}).
 * @param planDescription what was sent.
 * @param recorder the merged measurements.
 * @param inFlightPerSecond requests in flight, sampled each second.
 * @param measuredSeconds length of the measurement window (after warm-up, to the end of the run).
 * @param sent requests sent (warm-up included).
 * @param notes what the user should know about the plan.
 */
public record RunResult(String label, String planDescription, RunRecorder recorder, long[] inFlightPerSecond,
    double measuredSeconds, long sent, List<String> notes)
{
}
