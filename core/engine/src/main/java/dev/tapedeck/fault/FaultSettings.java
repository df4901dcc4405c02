package dev.tapedeck.fault;

/**
 * A face's fault injection: faults at a rate ({@code --failure-injection-rate}, {@code --failure-types}), per request
 * through a header ({@code --allow-fault-headers}), and on a timeline ({@code --fault-schedule}). Immutable.
 *
 * @param mix the share of requests that get a fault, and which.
 * @param allowHeaders honour {@code x-tapedeck-fault} and llm-d's {@code X-Return-Error} request headers.
 * @param schedule the timeline of instance faults.
 */
public record FaultSettings(FaultMix mix, boolean allowHeaders, FaultSchedule schedule)
{
    /** No fault injection. */
    public static final FaultSettings NONE = new FaultSettings(FaultMix.NONE, false, FaultSchedule.NONE);

    /**
     * Replaces nulls with the empty settings.
     */
    public FaultSettings
    {
        mix = null == mix ? FaultMix.NONE : mix;
        schedule = null == schedule ? FaultSchedule.NONE : schedule;
    }

    /**
     * @return true if any fault can be injected (the metric is then exposed).
     */
    public boolean enabled()
    {
        return mix.active() || allowHeaders || !schedule.events().isEmpty();
    }
}
