package dev.tapedeck.engine;

import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.latency.StepShape;

/**
 * How long a composed step lasts. Without recorded decoders ({@code --replay-steps}) it is the latency model's cost
 * of the step. With them, the recorded decoder with the longest context paces the step: its next recorded gap is the
 * step's decode time; the step lasts the longer of that gap and the model's cost of the rest of the step (prefill
 * chunks and decodes of unmatched requests; nothing when there is no rest). A latency model that paces decodes
 * ({@link LatencyModel#newDecodePacing}) draws each of its decoders' gap and tokens here, the same way.
 * <p>
 * <b>Not thread safe</b>; owned by the engine. Allocates nothing per step.
 */
final class StepTimer
{
    private final LatencyModel model;
    private final Rest rest = new Rest();

    StepTimer(final LatencyModel model)
    {
        this.model = model;
    }

    long durationNs(final Step step, final SeededRandom random)
    {
        if (0 == step.pacedDecodes())
        {
            return model.stepDurationNs(step, random); // most steps: no pass over the step's requests
        }
        long pacerGapNs = -1;
        int pacerContext = -1;
        rest.of(step);
        for (int i = 0, size = step.size(); i < size; i++)
        {
            final Request request = step.request(i);
            if (Request.State.DECODE == request.state && (request.hasRecordedStep() || null != request.pacing))
            {
                final long gapNs;
                if (request.hasRecordedStep())
                {
                    gapNs = request.stepGapsNs[request.stepCursor];
                }
                else
                {
                    gapNs = model.pacedStepNs(request.pacing, step.runningRequests(), random);
                    request.pacedTokens = request.pacing.tokens();
                }
                final int context = request.contextLength();
                if (context > pacerContext)
                {
                    pacerContext = context;
                    pacerGapNs = gapNs;
                }
                rest.decodeRequests--;
                rest.decodeContextTokens -= context;
                rest.scheduledTokens -= step.tokens(i);
            }
        }
        if (pacerGapNs < 0)
        {
            return model.stepDurationNs(step, random);
        }
        final boolean restEmpty = 0 == rest.decodeRequests && 0 == rest.prefillRequests();
        return Math.max(pacerGapNs, restEmpty ? 0 : model.stepDurationNs(rest, random));
    }

    /** The step without its recorded decoders: the step's own prefill work, fewer decodes. */
    private static final class Rest implements StepShape
    {
        private Step step;
        int decodeRequests;
        long decodeContextTokens;
        int scheduledTokens;

        void of(final Step composed)
        {
            step = composed;
            decodeRequests = composed.decodeRequests();
            decodeContextTokens = composed.decodeContextTokens();
            scheduledTokens = composed.scheduledTokens();
        }

        @Override
        public int scheduledTokens()
        {
            return scheduledTokens;
        }

        @Override
        public int decodeRequests()
        {
            return decodeRequests;
        }

        @Override
        public long decodeContextTokens()
        {
            return decodeContextTokens;
        }

        @Override
        public int prefillTokens()
        {
            return step.prefillTokens();
        }

        @Override
        public int prefillRequests()
        {
            return step.prefillRequests();
        }

        @Override
        public long prefillAttentionPairs()
        {
            return step.prefillAttentionPairs();
        }

        @Override
        public int runningRequests()
        {
            return step.runningRequests();
        }
    }
}
