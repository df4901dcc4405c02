package dev.tapedeck.kvevents;

import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/**
 * Lets tests in other packages read a stager's ring (the publisher's side) without a publisher thread.
 */
public final class KvEventsTestAccess
{
    private KvEventsTestAccess()
    {
    }

    /**
     * @param stager an engine's stager.
     * @return its ring.
     */
    public static OneToOneRingBuffer ring(final KvEventStager stager)
    {
        return stager.ring();
    }
}
