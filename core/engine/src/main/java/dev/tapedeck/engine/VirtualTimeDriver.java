package dev.tapedeck.engine;

import java.util.List;

/**
 * Runs an engine in virtual time: the clock jumps straight to the next arrival or the engine's next deadline, so a
 * whole workload runs as fast as the engine can compute it, with the same steps as in real time for the same seed.
 * Single-threaded; runs on the caller's thread.
 */
public final class VirtualTimeDriver
{
    private VirtualTimeDriver()
    {
    }

    /**
     * Submit each request at its {@link Request#arrivalNs()} and run until every request has finished.
     *
     * @param engine the engine (its start time must not be after the first arrival).
     * @param requests requests ordered by arrival time.
     * @return requests the engine refused (queue full, too long); they were not run.
     */
    public static int run(final Engine engine, final List<Request> requests)
    {
        int next = 0;
        int refused = 0;
        while (true)
        {
            final long arrivalNs = next < requests.size() ? requests.get(next).arrivalNs() : Long.MAX_VALUE;
            final long deadlineNs = engine.nextDeadlineNs();
            if (Long.MAX_VALUE == arrivalNs && Long.MAX_VALUE == deadlineNs)
            {
                return refused;
            }
            final long nowNs = Math.min(arrivalNs, deadlineNs);
            while (next < requests.size() && requests.get(next).arrivalNs() == nowNs)
            {
                if (SubmitResult.ACCEPTED != engine.submit(requests.get(next), nowNs))
                {
                    refused++;
                }
                next++;
            }
            engine.doWork(nowNs);
        }
    }
}
