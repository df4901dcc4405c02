package dev.tapedeck.engine;

import dev.tapedeck.workload.OutputLengthDistribution;

/**
 * Where a request's output tokens come from and how many it produces: EOS emulation (a drawn natural length when
 * {@code max_tokens} is unset), echoed prompts, a recorded output ({@link TokenReplay}), a token pool of the request's
 * own, or the engine's random token space.
 * <p>
 * <b>Not thread safe</b>; owned by the engine and called on its thread. Allocates nothing per token.
 */
final class TokenSource
{
    private final OutputLengthDistribution outputLengths;
    private final int maxModelLen;
    private final int[] randomTokenIds;
    private final int eosTokenId;
    private final TokenReplay replay;
    private final StepReplay steps;
    private final SpeculativeDecoding speculative;
    private final dev.tapedeck.latency.LatencyModel model;

    TokenSource(final EngineConfig config)
    {
        outputLengths = config.outputLengths();
        maxModelLen = config.maxModelLen();
        randomTokenIds = config.randomTokenIds();
        eosTokenId = config.eosTokenId();
        replay = config.tokenReplay();
        steps = config.stepReplay();
        speculative = config.speculativeDecoding();
        model = config.latencyModel();
    }

    /**
     * Plan a new request's output ({@link #planOutput}), then apply its recorded steps, if any: at most the
     * recorded total, finishing as recorded, and no EOS emulation; and set its speculative drafts per step.
     */
    void plan(final Request request)
    {
        request.stepGapsNs = null;
        request.stepTokens = null;
        request.firstChunkTokens = 1;
        planOutput(request);
        if (null != steps && null == request.fixedOutputTokenIds())
        {
            final FinishReason recordedTokensFinish = request.recordedFinish;
            steps.assign(request);
            if (null != request.stepTokens)
            {
                long total = request.firstChunkTokens;
                for (final int tokens : request.stepTokens)
                {
                    total += tokens;
                }
                final int cap = Request.UNSET != request.maxTokens() ? request.maxTokens() :
                    maxModelLen - request.promptLength();
                final boolean whole = total <= cap;
                request.outputLimit = whole ? (int)total : cap;
                request.limitFinishReason = whole ? request.recordedFinish : FinishReason.LENGTH;
                request.endsWithEos = false;
            }
            if (null != request.recordedTokenIds)
            {
                request.recordedFinish = recordedTokensFinish;
            }
        }
        request.pacing = null == request.stepTokens ? model.newDecodePacing(request.promptLength()) : null;
        request.pacedTokens = 1;
        final boolean bursts = null != request.stepTokens || null != request.pacing;
        request.draftTokens = null == speculative || (speculative.recorded() && !bursts) ? 0 :
            speculative.numSpeculativeTokens();
    }

    /**
     * Decide how many tokens the request will produce and why it will stop (EOS emulation).
     */
    void planOutput(final Request request)
    {
        final int room = maxModelLen - request.promptLength();
        final int[] fixed = request.fixedOutputTokenIds();
        final int maxTokens = request.maxTokens();
        request.endsWithEos = false;
        request.recordedTokenIds = null;
        if (null != replay && null == fixed)
        {
            replay.assign(request);
        }
        final int[] recorded = request.recordedTokenIds;
        if (null != recorded)
        {
            final int cap = Request.UNSET != maxTokens ? maxTokens : room;
            final boolean whole = recorded.length <= cap;
            request.outputLimit = whole ? recorded.length : cap;
            request.limitFinishReason = whole ? request.recordedFinish : FinishReason.LENGTH;
        }
        else if (null != fixed)
        {
            final int cap = Request.UNSET == maxTokens ? room : maxTokens;
            final int length = fixed.length + (request.fixedOutputEndsWithEos() ? 1 : 0);
            final boolean whole = length <= cap;
            request.outputLimit = whole ? length : cap;
            request.limitFinishReason = whole ? FinishReason.STOP : FinishReason.LENGTH;
            request.endsWithEos = whole && request.fixedOutputEndsWithEos();
        }
        else if (Request.UNSET != maxTokens)
        {
            request.outputLimit = maxTokens;
            request.limitFinishReason = FinishReason.LENGTH;
        }
        else if (request.ignoreEos())
        {
            request.outputLimit = room;
            request.limitFinishReason = FinishReason.LENGTH;
        }
        else
        {
            final int sampled = model.sampleOutputLength(request.random);
            final int natural = Math.max(sampled > 0 ? sampled : outputLengths.draw(request.random),
                Math.max(request.minTokens(), 1));
            final boolean fits = natural < room;
            request.outputLimit = fits ? natural : room;
            request.limitFinishReason = fits ? FinishReason.STOP : FinishReason.LENGTH;
            request.endsWithEos = fits;
        }
    }

    int nextTokenId(final Request request)
    {
        final int index = request.numOutputTokens;
        final int[] recorded = request.recordedTokenIds;
        if (null != recorded && index < recorded.length)
        {
            return recorded[index];
        }
        if (request.endsWithEos && index + 1 == request.outputLimit)
        {
            return request.eosTokenIdOr(eosTokenId);
        }
        final int[] fixed = request.fixedOutputTokenIds();
        if (null != fixed)
        {
            return fixed[index % fixed.length];
        }
        final int[] pool = null != request.tokenPool() ? request.tokenPool() : randomTokenIds;
        return pool[request.random.nextInt(pool.length)];
    }
}
