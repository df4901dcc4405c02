package dev.tapedeck.fault;

import java.util.ArrayList;
import java.util.List;

import dev.tapedeck.latency.SeededRandom;

/**
 * Which requests get a fault: a percentage of them, each drawing one of the listed faults with equal chance
 * (llm-d-inference-sim's {@code --failure-injection-rate} and {@code --failure-types}). Immutable.
 *
 * @param ratePercent share of requests that get a fault, 0 to 100.
 * @param faults the faults drawn from; never empty when the rate is above 0.
 */
public record FaultMix(double ratePercent, List<RequestFault> faults)
{
    /** No fault, ever. */
    public static final FaultMix NONE = new FaultMix(0, List.of());

    /**
     * Validates and copies the list.
     */
    public FaultMix
    {
        faults = List.copyOf(faults);
        if (!(ratePercent >= 0 && ratePercent <= 100))
        {
            throw new IllegalArgumentException("--failure-injection-rate must be 0 to 100, got " + ratePercent);
        }
        if (ratePercent > 0 && faults.isEmpty())
        {
            throw new IllegalArgumentException("--failure-types must name at least one fault");
        }
    }

    /**
     * @param ratePercent share of requests that get a fault, 0 to 100.
     * @param types the faults, comma- or space-separated ({@link RequestFault#parse}); null or blank for llm-d's six.
     * @return the mix.
     * @throws IllegalArgumentException naming a fault that does not parse.
     */
    public static FaultMix of(final double ratePercent, final String types)
    {
        final String list = null == types || types.isBlank() ? RequestFault.LLMD_TYPES : types;
        final List<RequestFault> faults = new ArrayList<>();
        for (final String type : list.split("[,\\s]+"))
        {
            if (!type.isEmpty())
            {
                faults.add(RequestFault.parse(type));
            }
        }
        return new FaultMix(ratePercent, faults);
    }

    /**
     * @return true if some requests get a fault.
     */
    public boolean active()
    {
        return ratePercent > 0;
    }

    /**
     * Draw for one request.
     *
     * @param random the face's seeded random.
     * @return the fault this request gets, or null.
     */
    public RequestFault draw(final SeededRandom random)
    {
        if (ratePercent <= 0 || random.nextDouble() * 100 >= ratePercent)
        {
            return null;
        }
        return faults.size() == 1 ? faults.get(0) : faults.get(random.nextInt(faults.size()));
    }

    @Override
    public String toString()
    {
        final StringBuilder out = new StringBuilder();
        for (final RequestFault fault : faults)
        {
            out.append(out.length() > 0 ? "," : "").append(fault);
        }
        return ratePercent + "% of " + out;
    }
}
