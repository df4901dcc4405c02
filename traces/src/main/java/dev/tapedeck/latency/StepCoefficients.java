package dev.tapedeck.latency;

import java.util.List;
import java.util.Locale;

/**
 * Coefficients of the step model: {@code step = base + prefillToken x prefill tokens + decodeRequest x decodes +
 * contextKiloToken x (decode context tokens / 1000)}, all in microseconds, plus a relative jitter.
 * <p>
 * The named profiles are fitted by {@code StepModelFit} from real vLLM runs (see docs/latency-models.md for the data,
 * the method and the fit quality). Immutable.
 *
 * @param name profile name, as given to {@code --step-profile}.
 * @param baseUs fixed cost of a step (kernel launches, sampling, scheduling).
 * @param prefillTokenUs cost per prompt token computed in the step.
 * @param decodeRequestUs cost per request decoding in the step.
 * @param contextKiloTokenUs cost per 1000 tokens of KV context read by the decodes.
 * @param jitter relative standard deviation of a step's duration (0 = deterministic).
 * @param source where the numbers come from.
 */
public record StepCoefficients(
    String name,
    double baseUs,
    double prefillTokenUs,
    double decodeRequestUs,
    double contextKiloTokenUs,
    double jitter,
    String source)
{
    /**
     * The default profile: an 8B dense model (Llama-3.1-8B, bf16) on one RTX PRO 6000 under vLLM 0.19.0, fitted from
     * 300 ShareGPT requests at about 10 requests/s (LLMServingSim bench, MIT).
     */
    public static final StepCoefficients DENSE_8B_RTXPRO6000 = new StepCoefficients(
        "dense-8b-rtxpro6000", 15022.3, 29.067, 118.666, 0.734, 0.0,
        "Llama-3.1-8B bf16, 1x RTX PRO 6000, vLLM 0.19.0 (casys-kaist/LLMServingSim bench, MIT)");

    /** Qwen3-32B bf16 on two RTX PRO 6000 (TP 2), vLLM 0.19.0; same source and method. */
    public static final StepCoefficients DENSE_32B_TP2_RTXPRO6000 = new StepCoefficients(
        "dense-32b-tp2-rtxpro6000", 30209.971, 133.265, 288.854, 0.0, 0.0,
        "Qwen3-32B bf16, 2x RTX PRO 6000 (TP 2), vLLM 0.19.0 (casys-kaist/LLMServingSim bench, MIT)");

    /**
     * Qwen3-30B-A3B (MoE) bf16 on RTX PRO 6000 (DP 2, EP), per engine, vLLM 0.19.0; same source and method. The fit
     * prefers a context (attention) term to a per-decode term for this model.
     */
    public static final StepCoefficients MOE_30B_A3B_RTXPRO6000 = new StepCoefficients(
        "moe-30b-a3b-rtxpro6000", 23371.398, 35.607, 0.0, 69.544, 0.0,
        "Qwen3-30B-A3B-Instruct-2507 bf16, RTX PRO 6000, DP 2 + EP, vLLM 0.19.0 (casys-kaist/LLMServingSim, MIT)");

    /** Every shipped profile, the default first. */
    public static final List<StepCoefficients> PROFILES =
        List.of(DENSE_8B_RTXPRO6000, DENSE_32B_TP2_RTXPRO6000, MOE_30B_A3B_RTXPRO6000);

    /**
     * Validates the coefficients.
     */
    public StepCoefficients
    {
        if (baseUs < 0 || prefillTokenUs < 0 || decodeRequestUs < 0 || contextKiloTokenUs < 0)
        {
            throw new IllegalArgumentException("step model coefficients must not be negative");
        }
        if (jitter < 0 || jitter > 0.5)
        {
            throw new IllegalArgumentException("step jitter must be within [0, 0.5], got " + jitter);
        }
    }

    /**
     * @param profileName a profile name.
     * @return the named profile.
     * @throws IllegalArgumentException naming the known profiles when the name is unknown.
     */
    public static StepCoefficients profile(final String profileName)
    {
        for (final StepCoefficients profile : PROFILES)
        {
            if (profile.name.equals(profileName))
            {
                return profile;
            }
        }
        final StringBuilder known = new StringBuilder();
        for (final StepCoefficients profile : PROFILES)
        {
            known.append(known.length() == 0 ? "" : ", ").append(profile.name);
        }
        throw new IllegalArgumentException("unknown step profile '" + profileName + "'; known: " + known);
    }

    /**
     * @param newBaseUs replacement.
     * @param newPrefillTokenUs replacement.
     * @param newDecodeRequestUs replacement.
     * @param newContextKiloTokenUs replacement.
     * @param newJitter replacement.
     * @return a copy with the given values, marked as customised.
     */
    public StepCoefficients with(
        final double newBaseUs,
        final double newPrefillTokenUs,
        final double newDecodeRequestUs,
        final double newContextKiloTokenUs,
        final double newJitter)
    {
        final boolean same = newBaseUs == baseUs && newPrefillTokenUs == prefillTokenUs &&
            newDecodeRequestUs == decodeRequestUs && newContextKiloTokenUs == contextKiloTokenUs && newJitter == jitter;
        return same ? this : new StepCoefficients(name + "+custom", newBaseUs, newPrefillTokenUs, newDecodeRequestUs,
            newContextKiloTokenUs, newJitter, source + ", overridden on the command line");
    }

    @Override
    public String toString()
    {
        return String.format(Locale.ROOT,
            "%s: %.1fus + %.3fus/prefill token + %.3fus/decode + %.3fus/1k ctx, jitter %.2f",
            name, baseUs, prefillTokenUs, decodeRequestUs, contextKiloTokenUs, jitter);
    }
}
