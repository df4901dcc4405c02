package dev.tapedeck.engine;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A composed step's counts, as the latency model and {@link StepTimer} read them: decodes that pace their own step
 * (recorded gaps left, or a pacing model) are counted as they are added and uncounted when a preemption takes them
 * out again.
 */
class StepTest
{
    private static Request decoding(final String id)
    {
        final Request request = new Request(id, new int[8]);
        request.state = Request.State.DECODE;
        return request;
    }

    @Test
    void shouldCountOnlyDecodesWithRecordedGapsLeftAsPacedAndUncountThemWhenPreempted()
    {
        final Request plain = decoding("plain");
        final Request recorded = decoding("recorded");
        recorded.stepGapsNs = new long[] {5, 6};
        final Request spent = decoding("spent");
        spent.stepGapsNs = new long[] {5};
        spent.stepCursor = 1; // its recorded steps are used up: the model times it, as any other decode
        final Step step = new Step(4);
        step.reset(0, 1);
        step.addDecode(plain, 0);
        step.addDecode(recorded, 0);
        step.addDecode(spent, 0);
        assertEquals(3, step.decodeRequests());
        assertEquals(1, step.pacedDecodes());

        assertEquals(1, step.remove(recorded));
        assertEquals(2, step.decodeRequests());
        assertEquals(0, step.pacedDecodes());

        step.reset(10, 2);
        step.addDecode(recorded, 0);
        assertEquals(1, step.pacedDecodes());
        step.reset(20, 3);
        assertEquals(0, step.pacedDecodes());
    }
}
