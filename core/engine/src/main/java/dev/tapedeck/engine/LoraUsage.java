package dev.tapedeck.engine;

import java.util.Arrays;
import java.util.Collection;

import org.agrona.collections.Int2IntHashMap;

import dev.tapedeck.lora.LoraAdapter;

/**
 * How many waiting and running requests each LoRA adapter has in one engine, kept as requests move (queued,
 * scheduled, preempted, finished), for two readers: the scheduler's {@code --max-loras} gate (vLLM V1 admits a
 * waiting request of an adapter that is not running only while fewer than {@code max_loras} distinct adapters run;
 * base-model requests are never gated) and {@code vllm:lora_requests_info} (the running and waiting adapters, and
 * when that last changed).
 * <p>
 * Adapters get a slot the first time one of their requests arrives (keyed by id, in arrival order) and keep it; the
 * counts are arrays indexed by slot. Only requests with an adapter are counted, so base-model traffic costs one null
 * check per transition. Allocates only when a new adapter is seen. <b>Not thread safe</b>: owned by the engine.
 */
final class LoraUsage
{
    private final int maxLoras;
    private final Int2IntHashMap slotById = new Int2IntHashMap(-1);
    private LoraAdapter[] adapters = new LoraAdapter[4];
    private int[] waiting = new int[4];
    private int[] running = new int[4];
    private int slots;
    private int runningAdapters;
    private long changedNs = Long.MIN_VALUE;

    LoraUsage(final int maxLoras)
    {
        this.maxLoras = maxLoras;
    }

    /**
     * @return true unless the request has an adapter that is not running while {@code max_loras} others run.
     */
    boolean admissible(final Request request)
    {
        final LoraAdapter lora = request.lora();
        if (null == lora || runningAdapters < maxLoras)
        {
            return true;
        }
        final int slot = slotById.get(lora.id());
        return slot >= 0 && running[slot] > 0;
    }

    /** A request entered the waiting queue (new, or put back by preemption after {@link #preempted}). */
    void queued(final Request request, final long nowNs)
    {
        if (null != request.lora())
        {
            final int slot = slotOf(request.lora());
            if (0 == waiting[slot]++)
            {
                changedNs = nowNs;
            }
        }
    }

    /** A waiting request entered the running set. */
    void scheduled(final Request request, final long nowNs)
    {
        if (null != request.lora())
        {
            final int slot = slotOf(request.lora());
            if (0 == --waiting[slot])
            {
                changedNs = nowNs;
            }
            if (0 == running[slot]++)
            {
                runningAdapters++;
                changedNs = nowNs;
            }
        }
    }

    /** A running request lost its blocks and went back to waiting. */
    void preempted(final Request request, final long nowNs)
    {
        if (null != request.lora())
        {
            leaveRunning(slotOf(request.lora()), nowNs);
            queued(request, nowNs);
        }
    }

    /**
     * A request ended (finished or aborted).
     *
     * @param wasWaiting true if it ended while waiting, false if while running.
     */
    void finished(final Request request, final boolean wasWaiting, final long nowNs)
    {
        if (null != request.lora())
        {
            final int slot = slotOf(request.lora());
            if (!wasWaiting)
            {
                leaveRunning(slot, nowNs);
            }
            else if (0 == --waiting[slot])
            {
                changedNs = nowNs;
            }
        }
    }

    /**
     * @return distinct adapters with running requests.
     */
    int runningAdapters()
    {
        return runningAdapters;
    }

    /**
     * @param ofRunning true for adapters with running requests, false for adapters with waiting ones.
     * @param names where their names are added, in the order the adapters were first seen.
     */
    void adapterNames(final boolean ofRunning, final Collection<String> names)
    {
        final int[] counts = ofRunning ? running : waiting;
        for (int i = 0; i < slots; i++)
        {
            if (counts[i] > 0)
            {
                names.add(adapters[i].name());
            }
        }
    }

    /**
     * @return adapters seen so far (slots 0 to this minus one).
     */
    int slots()
    {
        return slots;
    }

    /**
     * @return the adapter in a slot.
     */
    LoraAdapter adapter(final int slot)
    {
        return adapters[slot];
    }

    /**
     * @return its waiting requests.
     */
    int waiting(final int slot)
    {
        return waiting[slot];
    }

    /**
     * @return its running requests.
     */
    int running(final int slot)
    {
        return running[slot];
    }

    /**
     * @return the engine time the running or waiting set of adapters last changed, {@link Long#MIN_VALUE} if never.
     */
    long changedNs()
    {
        return changedNs;
    }

    private void leaveRunning(final int slot, final long nowNs)
    {
        if (0 == --running[slot])
        {
            runningAdapters--;
            changedNs = nowNs;
        }
    }

    private int slotOf(final LoraAdapter lora)
    {
        int slot = slotById.get(lora.id());
        if (slot < 0)
        {
            if (slots == adapters.length)
            {
                adapters = Arrays.copyOf(adapters, slots * 2);
                waiting = Arrays.copyOf(waiting, slots * 2);
                running = Arrays.copyOf(running, slots * 2);
            }
            slot = slots++;
            slotById.put(lora.id(), slot);
        }
        adapters[slot] = lora;
        return slot;
    }
}
