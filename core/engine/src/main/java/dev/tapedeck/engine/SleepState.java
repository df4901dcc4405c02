package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.tapedeck.metrics.PrometheusExposition;

/**
 * vLLM's sleep state of an engine, shared by the faces ({@code serve}'s {@code /sleep} routes, {@code play}'s
 * {@code sleep}/{@code wake_up}/{@code is_sleeping} utility calls): whether scheduling is paused, where the weights
 * are and whether the KV cache is resident. Level 0 pauses scheduling only; level 1 offloads the weights and releases
 * the KV cache; level 2 discards both. A wake-up brings back what its tags name ({@code weights}, {@code kv_cache};
 * none for all; {@code scheduling} names no resource) and scheduling resumes once every resource is back, so
 * {@code tags=weights} then {@code tags=kv_cache} wakes an engine in two steps, as vLLM's.
 * <p>
 * Not thread safe: confined to the face's engine thread (or event loop).
 */
public final class SleepState
{
    /** What happens to requests in flight when the engine goes to sleep. */
    public enum Mode
    {
        /** They are aborted (vLLM's default). */
        ABORT,
        /** They finish first. */
        WAIT,
        /** They are frozen until the wake-up. */
        KEEP
    }

    private static final List<String> TAGS = List.of("weights", "kv_cache", "scheduling");

    private boolean schedulerPaused;
    private boolean weightsResident = true;
    private boolean weightsDiscarded;
    private boolean kvCacheResident = true;

    /**
     * @param text a {@code level} parameter, or null for 1.
     * @return the level, 0 to 2.
     * @throws IllegalArgumentException naming what is wrong.
     */
    public static int parseLevel(final String text)
    {
        final int level;
        try
        {
            level = null == text ? 1 : Integer.parseInt(text.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("level must be 0, 1 or 2, got '" + text + "'");
        }
        if (level < 0 || level > 2)
        {
            throw new IllegalArgumentException("level must be 0, 1 or 2, got " + level);
        }
        return level;
    }

    /**
     * @param text a {@code mode} parameter, or null for {@code abort}.
     * @return the mode.
     * @throws IllegalArgumentException naming what is wrong.
     */
    public static Mode parseMode(final String text)
    {
        if (null == text)
        {
            return Mode.ABORT;
        }
        switch (text.trim().toLowerCase(Locale.ROOT))
        {
            case "abort":
                return Mode.ABORT;
            case "wait":
                return Mode.WAIT;
            case "keep":
                return Mode.KEEP;
            default:
                throw new IllegalArgumentException("mode must be abort, wait or keep, got '" + text + "'");
        }
    }

    /**
     * @param tags wake-up tags.
     * @throws IllegalArgumentException naming the first unknown tag.
     */
    public static void checkTags(final List<String> tags)
    {
        for (final String tag : tags)
        {
            if (!TAGS.contains(tag))
            {
                throw new IllegalArgumentException("unknown tag '" + tag + "' (expected weights, kv_cache or " +
                    "scheduling)");
            }
        }
    }

    /**
     * Pause scheduling: the first step of every sleep.
     */
    public void pauseScheduling()
    {
        schedulerPaused = true;
    }

    /**
     * Release memory as the level says (after what ran was aborted, finished or frozen): level 1 offloads the weights,
     * level 2 discards them; both release the KV cache.
     *
     * @param level the sleep level.
     * @return true if the KV cache is released (the face then forgets every cached block).
     */
    public boolean releaseMemory(final int level)
    {
        if (level < 1)
        {
            return false;
        }
        weightsResident = false;
        weightsDiscarded |= 2 == level;
        kvCacheResident = false;
        return true;
    }

    /**
     * Bring back what the tags name; resume scheduling if everything is back.
     *
     * @param tags the tags ({@link #checkTags checked}); empty for all.
     * @return the resources brought back.
     */
    public List<String> wakeUp(final List<String> tags)
    {
        final List<String> woken = new ArrayList<>();
        if ((tags.isEmpty() || tags.contains("weights")) && !weightsResident)
        {
            weightsResident = true;
            weightsDiscarded = false;
            woken.add("weights");
        }
        if ((tags.isEmpty() || tags.contains("kv_cache")) && !kvCacheResident)
        {
            kvCacheResident = true;
            woken.add("kv_cache");
        }
        if (weightsResident && kvCacheResident)
        {
            schedulerPaused = false;
        }
        return woken;
    }

    /**
     * @return true while scheduling is paused: no new request may be scheduled.
     */
    public boolean schedulerPaused()
    {
        return schedulerPaused;
    }

    /**
     * @return vLLM's {@code is_sleeping}: scheduling paused or a resource not resident.
     */
    public boolean sleeping()
    {
        return schedulerPaused || !weightsResident || !kvCacheResident;
    }

    /**
     * @return the state {@code vllm:engine_sleep_state} shows ({@link PrometheusExposition#SLEEP_AWAKE} ...).
     */
    public int metricCode()
    {
        if (!sleeping())
        {
            return PrometheusExposition.SLEEP_AWAKE;
        }
        if (!weightsResident)
        {
            return weightsDiscarded ? (kvCacheResident ? PrometheusExposition.SLEEP_PAUSED :
                PrometheusExposition.SLEEP_DISCARD_ALL) : PrometheusExposition.SLEEP_WEIGHTS_OFFLOADED;
        }
        return PrometheusExposition.SLEEP_PAUSED;
    }
}
