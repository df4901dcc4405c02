package dev.tapedeck.enginecore;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.SleepState;
import dev.tapedeck.protocol.enginecore.UtilityCall;
import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.ValueType;

/**
 * The engine core's side of vLLM's sleep mode: the {@code sleep [level, mode]}, {@code wake_up [tags]} and
 * {@code is_sleeping} utility calls with real effect. Sleeping, the engine takes no new request: ADDs are held, in
 * order, and admitted at the wake-up. {@code abort} (the default) aborts what runs, {@code wait} answers the call once
 * it finished, {@code keep} freezes it (no step until the wake-up). Levels 1 and 2 release the KV cache: every cached
 * block is forgotten and {@code AllBlocksCleared} published ({@link SleepState} has the rules).
 * <p>
 * Confined to the engine's thread, with its {@link EngineCoreAgent}.
 */
final class EngineSleep
{
    /** A sleep call answered later ({@code mode=wait}). */
    private record Pending(long callId, int client, int level)
    {
    }

    /** An ADD held while sleeping: its payload, the client it came from, and its request id (null if unreadable). */
    record HeldAdd(byte[] payload, int receivedOn, String requestId)
    {
    }

    /** Answers a utility call: the client, the call id, a failure message or null, and the result. */
    interface Replier
    {
        void reply(int client, long callId, String failure, UtilityCall.ResultWriter result);
    }

    private final SleepState state = new SleepState();
    private final ArrayDeque<HeldAdd> held = new ArrayDeque<>();
    private final Engine engine;
    private final Runnable resetPrefixCache;
    private final Replier replier;
    private final java.util.function.Consumer<Boolean> freeze;
    private Pending pending;
    private boolean frozen;

    /**
     * @param engine the engine.
     * @param resetPrefixCache forgets every cached block (publishing {@code AllBlocksCleared}).
     * @param replier answers utility calls.
     * @param freeze stops (true) or restarts (false) the engine's time, for {@code mode=keep}.
     */
    EngineSleep(final Engine engine, final Runnable resetPrefixCache, final Replier replier,
        final java.util.function.Consumer<Boolean> freeze)
    {
        this.engine = engine;
        this.resetPrefixCache = resetPrefixCache;
        this.replier = replier;
        this.freeze = freeze;
    }

    /**
     * @param method a utility call's method.
     * @return true for the calls this class answers.
     */
    static boolean answers(final String method)
    {
        return "sleep".equals(method) || "wake_up".equals(method) || "is_sleeping".equals(method);
    }

    /**
     * Answer {@code sleep}, {@code wake_up} or {@code is_sleeping}.
     *
     * @param call the decoded call.
     * @param client the client to answer.
     * @param nowNs the engine's time.
     */
    void onUtility(final UtilityCall call, final int client, final long nowNs)
    {
        switch (call.method())
        {
            case "sleep":
                sleep(call, client, nowNs);
                break;
            case "wake_up":
                wakeUp(call, client);
                break;
            default:
                final boolean sleeping = state.sleeping();
                replier.reply(client, call.callId(), null, w -> w.bool(sleeping));
        }
    }

    private void sleep(final UtilityCall call, final int client, final long nowNs)
    {
        final MsgPackReader args = call.arguments();
        final int level;
        final SleepState.Mode mode;
        try
        {
            level = call.argumentCount() > 0 && ValueType.INTEGER == args.nextType() ? args.readInt() :
                SleepState.parseLevel(null);
            SleepState.parseLevel(Integer.toString(level));
            mode = SleepState.parseMode(call.argumentCount() > 1 && ValueType.STRING == args.nextType() ?
                args.readString() : null);
        }
        catch (final IllegalArgumentException ex)
        {
            replier.reply(client, call.callId(), "Call to sleep method failed: " + ex.getMessage(), null);
            return;
        }
        if (null != pending)
        {
            replier.reply(client, call.callId(), "Call to sleep method failed: another sleep is still waiting for " +
                "the running requests to finish", null);
            return;
        }
        state.pauseScheduling();
        switch (mode)
        {
            case ABORT:
                engine.abortAll(nowNs);
                asleep(new Pending(call.callId(), client, level));
                break;
            case KEEP:
                if (!frozen)
                {
                    frozen = true;
                    freeze.accept(true);
                }
                asleep(new Pending(call.callId(), client, level));
                break;
            default: // WAIT: answered once what runs has finished
                pending = new Pending(call.callId(), client, level);
                poll();
        }
    }

    private void asleep(final Pending call)
    {
        if (state.schedulerPaused() && state.releaseMemory(call.level())) // not if woken up meanwhile
        {
            resetPrefixCache.run();
        }
        replier.reply(call.client(), call.callId(), null, UtilityCall.NIL);
    }

    private void wakeUp(final UtilityCall call, final int client)
    {
        final List<String> tags = new ArrayList<>();
        final MsgPackReader args = call.arguments();
        if (call.argumentCount() > 0 && ValueType.ARRAY == args.nextType())
        {
            final int n = args.readArrayHeader();
            for (int i = 0; i < n && args.ok(); i++)
            {
                tags.add(args.readString());
            }
        }
        try
        {
            SleepState.checkTags(tags);
        }
        catch (final IllegalArgumentException ex)
        {
            replier.reply(client, call.callId(), "Call to wake_up method failed: " + ex.getMessage(), null);
            return;
        }
        state.wakeUp(tags);
        if (!state.schedulerPaused() && frozen)
        {
            frozen = false;
            freeze.accept(false);
        }
        final boolean awake = !state.sleeping();
        replier.reply(client, call.callId(), null, w -> w.bool(awake));
    }

    /**
     * Called each duty cycle: answers a {@code wait} sleep once the engine is idle.
     */
    void poll()
    {
        if (null != pending && 0 == engine.numRunning() + engine.numWaiting())
        {
            final Pending call = pending;
            pending = null;
            asleep(call);
        }
    }

    /**
     * @return true while new requests must be held.
     */
    boolean holdsAdds()
    {
        return state.schedulerPaused();
    }

    /**
     * @param add an ADD to admit at the wake-up.
     */
    void hold(final HeldAdd add)
    {
        held.add(add);
    }

    /**
     * @return the next ADD to admit now that the engine is awake, or null.
     */
    HeldAdd nextReleased()
    {
        return state.schedulerPaused() ? null : held.poll();
    }

    /**
     * Drop a held ADD the frontend aborted.
     *
     * @param requestId the aborted request.
     * @return true if it was held.
     */
    boolean dropHeld(final String requestId)
    {
        return held.removeIf(add -> requestId.equals(add.requestId()));
    }

    /**
     * @return every ADD still held, removed (on shutdown: each is finished with ABORT).
     */
    List<HeldAdd> drainHeld()
    {
        final List<HeldAdd> all = new ArrayList<>(held);
        held.clear();
        return all;
    }
}
