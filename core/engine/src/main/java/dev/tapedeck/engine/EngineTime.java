package dev.tapedeck.engine;

/**
 * An engine's time on a face: the face's clock less the time the engine stood frozen (a {@code stall} fault, a sleep
 * with {@code mode=keep}), standing still during a freeze, so that a frozen engine goes on where it stopped instead of
 * catching up in a burst of the steps due meanwhile. Freezes nest: the time moves again when the last one ends.
 * <p>
 * Not thread safe: confined to the face's engine thread (or event loop).
 */
public final class EngineTime
{
    private int freezes;
    private long freezeStartNs;
    private long frozenNs;

    /**
     * @param clockNs a time on the face's clock.
     * @return the same moment on the engine's time (a moment inside a freeze maps to the freeze's start).
     */
    public long engineNs(final long clockNs)
    {
        return (freezes > 0 ? Math.min(clockNs, freezeStartNs) : clockNs) - frozenNs;
    }

    /**
     * Begin or end one freeze.
     *
     * @param on true to begin one, false to end one (nothing when none is in effect).
     * @param clockNs now, on the face's clock.
     * @return true when the engine's time stopped (the first freeze began) or moves again (the last one ended).
     */
    public boolean freeze(final boolean on, final long clockNs)
    {
        if (on)
        {
            if (0 == freezes++)
            {
                freezeStartNs = clockNs;
                return true;
            }
            return false;
        }
        if (freezes > 0 && 0 == --freezes)
        {
            frozenNs += clockNs - freezeStartNs;
            return true;
        }
        return false;
    }

    /**
     * @return true while a freeze is in effect: the engine takes no step.
     */
    public boolean frozen()
    {
        return freezes > 0;
    }
}
