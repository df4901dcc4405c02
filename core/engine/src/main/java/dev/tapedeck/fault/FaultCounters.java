package dev.tapedeck.fault;

import dev.tapedeck.metrics.PrometheusExposition;

/**
 * How many faults one instance injected, by kind: {@code tapedeck:faults_injected_total{fault=..}}. Request faults
 * count once per request they hit; schedule faults once per time they start. Confined to the instance's thread.
 */
public final class FaultCounters
{
    /** The metric's name. */
    public static final String METRIC = "tapedeck:faults_injected_total";
    private final long[] requestFaults = new long[RequestFault.Kind.values().length];
    private final long[] scheduleFaults = new long[FaultSchedule.Action.values().length];

    /**
     * @param kind a request fault was applied.
     */
    public void count(final RequestFault.Kind kind)
    {
        requestFaults[kind.ordinal()]++;
    }

    /**
     * @param action a schedule fault started.
     */
    public void count(final FaultSchedule.Action action)
    {
        scheduleFaults[action.ordinal()]++;
    }

    /**
     * @param kind a request fault.
     * @return how many requests it hit.
     */
    public long hits(final RequestFault.Kind kind)
    {
        return requestFaults[kind.ordinal()];
    }

    /**
     * @return every fault counted.
     */
    public long total()
    {
        long total = 0;
        for (final long n : requestFaults)
        {
            total += n;
        }
        for (final long n : scheduleFaults)
        {
            total += n;
        }
        return total;
    }

    /**
     * Append the counter in Prometheus text format, one sample per kind (zeros included).
     *
     * @param out the exposition.
     * @param modelName the {@code model_name} label.
     */
    public void write(final StringBuilder out, final String modelName)
    {
        out.append("# HELP ").append(METRIC).append(" Faults injected by tapedeck (--failure-injection-rate, " +
            "x-tapedeck-fault, --fault-schedule).\n# TYPE ").append(METRIC).append(" counter\n");
        final String model = PrometheusExposition.escape(modelName);
        for (final RequestFault.Kind kind : RequestFault.Kind.values())
        {
            sample(out, kind.label(), model, requestFaults[kind.ordinal()]);
        }
        for (final FaultSchedule.Action action : FaultSchedule.Action.values())
        {
            sample(out, action.metricLabel(), model, scheduleFaults[action.ordinal()]);
        }
    }

    private static void sample(final StringBuilder out, final String fault, final String escapedModel, final long n)
    {
        out.append(METRIC).append("{fault=\"").append(fault).append("\",model_name=\"").append(escapedModel)
            .append("\"} ").append(n).append('\n');
    }
}
