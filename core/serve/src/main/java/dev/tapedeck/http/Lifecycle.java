package dev.tapedeck.http;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;

import dev.tapedeck.engine.SleepState;

/**
 * One instance's start-up and sleep state, as vLLM's server has them.
 * <ul>
 *     <li><b>Start-up</b> ({@code --startup-duration}, llm-d-inference-sim's flag): the port listens at once, but until
 *     the engine is ready no request is answered (vLLM binds its socket before its engine starts); only
 *     {@code GET /health/ready} answers, 503 until then.</li>
 *     <li><b>Sleep</b> ({@code --enable-sleep-mode}, {@code POST /sleep?level=&mode=}, {@code POST /wake_up?tags=},
 *     {@code GET /is_sleeping}): a sleeping instance takes no new request into its engines; they wait, queued, until
 *     it is awake. {@code mode=abort} (vLLM's default) aborts what runs, {@code wait} lets it finish first,
 *     {@code keep} freezes it. Level 1 offloads the weights and releases the KV cache (every cached block is forgotten
 *     and {@code AllBlocksCleared} published), level 2 discards the weights too, level 0 only pauses scheduling.
 *     {@code wake_up} brings back the resources its tags name ({@code weights}, {@code kv_cache}; none: all); the
 *     engine schedules again once all are back.</li>
 * </ul>
 * Held requests are run, in arrival order, when the instance is ready and awake, or when it shuts down (they are then
 * refused with 503). Confined to the instance's event loop.
 */
final class Lifecycle
{
    private static final System.Logger LOG = System.getLogger(Lifecycle.class.getName());
    private static final long DRAIN_POLL_NS = TimeUnit.MILLISECONDS.toNanos(5);

    private final Instance instance;
    private final boolean sleepModeEnabled;
    private final long readyAtNs;
    private final ArrayDeque<Runnable> held = new ArrayDeque<>();
    private boolean starting;
    private final SleepState sleep = new SleepState();
    private boolean frozen;

    /**
     * @param instance the instance.
     * @param sleepModeEnabled {@code --enable-sleep-mode}: the sleep routes are served.
     * @param startupDurationNs {@code --startup-duration}: how long after start the engine becomes ready.
     */
    Lifecycle(final Instance instance, final boolean sleepModeEnabled, final long startupDurationNs)
    {
        this.instance = instance;
        this.sleepModeEnabled = sleepModeEnabled;
        this.starting = startupDurationNs > 0;
        this.readyAtNs = instance.nowNs() + startupDurationNs;
    }

    /**
     * Arm the end of the start-up, on the instance's loop.
     */
    void start()
    {
        if (starting)
        {
            instance.loop().schedule(this::ready, Math.max(0, readyAtNs - instance.nowNs()), TimeUnit.NANOSECONDS);
        }
    }

    private void ready()
    {
        starting = false;
        LOG.log(System.Logger.Level.INFO, "instance {0}: engine ready after the start-up duration", instance.index());
        release();
    }

    /**
     * @return true until the start-up duration has passed.
     */
    boolean starting()
    {
        return starting;
    }

    /**
     * @return true while sleeping: the scheduler is paused or a resource is not resident (vLLM's
     *     {@code is_sleeping}).
     */
    boolean sleeping()
    {
        return sleep.sleeping();
    }

    /** The routes that run the engine, held while it sleeps. */
    static final java.util.Set<String> GENERATION_PATHS = java.util.Set.of("/v1/completions", "/v1/chat/completions",
        "/v1/responses", "/v1/messages", "/inference/v1/generate");

    /**
     * @param path a request's path.
     * @return true if the request must wait: any request but {@code /health/ready} while starting, a generation
     *     request while the scheduler is paused; never once the instance shuts down.
     */
    boolean holds(final String path)
    {
        if (instance.isShuttingDown())
        {
            return false;
        }
        if (starting)
        {
            return !"/health/ready".equals(path);
        }
        return sleep.schedulerPaused() && GENERATION_PATHS.contains(path);
    }

    /**
     * @return true if a completion must wait now (starting or scheduling paused, and not shutting down).
     */
    boolean holdsGeneration()
    {
        return holds("/v1/completions");
    }

    /**
     * @param request what to run once the instance is ready and awake (it checks {@link #holds} again).
     */
    void hold(final Runnable request)
    {
        held.add(request);
    }

    /**
     * Run every held request, in order (on shutdown they are refused).
     */
    void release()
    {
        for (int n = held.size(); n > 0 && !held.isEmpty(); n--)
        {
            held.poll().run();
        }
    }

    /**
     * The instance began to shut down: held requests are run (and refused with 503), a frozen engine goes on so that
     * its requests may finish within the drain.
     */
    void onShutdown()
    {
        if (frozen)
        {
            frozen = false;
            instance.stall(false);
        }
        release();
    }

    /**
     * @return true if {@code /sleep}, {@code /wake_up} and {@code /is_sleeping} are served.
     */
    boolean sleepModeEnabled()
    {
        return sleepModeEnabled;
    }

    /**
     * {@code POST /sleep?level=&mode=}.
     *
     * @param levelParam the {@code level} parameter, or null for 1.
     * @param modeParam the {@code mode} parameter, or null for {@code abort}.
     * @param respond gets the response, at once or when a {@code wait} has drained.
     */
    void sleep(final String levelParam, final String modeParam, final Consumer<FullHttpResponse> respond)
    {
        final long startNs = instance.nowNs();
        final int level;
        final SleepState.Mode mode;
        try
        {
            level = SleepState.parseLevel(levelParam);
        }
        catch (final IllegalArgumentException ex)
        {
            respond.accept(badParam("level", ex.getMessage()));
            return;
        }
        try
        {
            mode = SleepState.parseMode(modeParam);
        }
        catch (final IllegalArgumentException ex)
        {
            respond.accept(badParam("mode", ex.getMessage()));
            return;
        }
        sleep.pauseScheduling();
        LOG.log(System.Logger.Level.INFO, "instance {0}: sleep level {1}, mode {2}: {3} request(s) in flight",
            instance.index(), level, mode, instance.requestsInFlight());
        switch (mode)
        {
            case ABORT:
                instance.abortAll();
                awaitDrained(() -> asleep(level, startNs, respond)); // the aborts are written out first
                break;
            case KEEP:
                if (!frozen)
                {
                    frozen = true;
                    instance.stall(true);
                }
                asleep(level, startNs, respond);
                break;
            default: // WAIT: what runs finishes first
                awaitDrained(() -> asleep(level, startNs, respond));
        }
    }

    private void awaitDrained(final Runnable then)
    {
        if (0 == instance.requestsInFlight() || instance.isShuttingDown())
        {
            then.run();
            return;
        }
        instance.loop().schedule(() -> awaitDrained(then), DRAIN_POLL_NS, TimeUnit.NANOSECONDS);
    }

    private void asleep(final int level, final long startNs, final Consumer<FullHttpResponse> respond)
    {
        if (!sleep.schedulerPaused()) // woken up while what ran was finishing: nothing to release
        {
            respond.accept(ControlResponses.json(HttpResponseStatus.OK, "{\"status\":\"awake\",\"level\":" +
                level + ",\"elapsed_ms\":" + elapsedMs(startNs) + "}"));
            return;
        }
        if (sleep.releaseMemory(level))
        {
            instance.resetPrefixCache(); // the KV cache is released: every cached block is gone
        }
        respond.accept(ControlResponses.json(HttpResponseStatus.OK, "{\"status\":\"sleeping\",\"level\":" + level +
            ",\"elapsed_ms\":" + elapsedMs(startNs) + "}"));
    }

    /**
     * {@code POST /wake_up?tags=...}.
     *
     * @param tags the {@code tags} parameters; empty for all.
     * @return the response.
     */
    FullHttpResponse wakeUp(final List<String> tags)
    {
        final long startNs = instance.nowNs();
        try
        {
            SleepState.checkTags(tags);
        }
        catch (final IllegalArgumentException ex)
        {
            return badParam("tags", ex.getMessage());
        }
        final boolean wasPaused = sleep.schedulerPaused();
        final List<String> woken = sleep.wakeUp(tags);
        if (wasPaused && !sleep.schedulerPaused())
        {
            if (frozen)
            {
                frozen = false;
                instance.stall(false);
            }
            LOG.log(System.Logger.Level.INFO, "instance {0}: awake; {1} held request(s) go on", instance.index(),
                held.size());
            release();
        }
        final StringBuilder list = new StringBuilder();
        for (final String tag : woken)
        {
            list.append(list.length() > 0 ? "," : "").append('"').append(tag).append('"');
        }
        return ControlResponses.json(HttpResponseStatus.OK, "{\"status\":\"" + (sleeping() ? "sleeping" : "awake") +
            "\",\"tags_woken\":" + (tags.isEmpty() ? "null" : "[" + list + "]") + ",\"elapsed_ms\":" +
            elapsedMs(startNs) + "}");
    }

    /**
     * @return {@code GET /is_sleeping}.
     */
    FullHttpResponse isSleeping()
    {
        return ControlResponses.json(HttpResponseStatus.OK, "{\"is_sleeping\":" + sleeping() + "}");
    }

    /**
     * @return the state {@code vllm:engine_sleep_state} shows.
     */
    int sleepStateCode()
    {
        return sleep.metricCode();
    }

    private static FullHttpResponse badParam(final String name, final String message)
    {
        return ControlResponses.error(HttpResponseStatus.BAD_REQUEST, "BadRequestError", message, "query." + name);
    }

    private long elapsedMs(final long startNs)
    {
        return TimeUnit.NANOSECONDS.toMillis(instance.nowNs() - startNs);
    }
}
