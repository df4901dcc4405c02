package dev.tapedeck.nixl;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * The done-notifications a plane (or the side channel) received and not yet handed over: added on the receiving
 * thread, which then runs the consumer's wake-up; drained by the consumer, oldest first.
 * <p>
 * Thread safe: one or more receiving threads, one draining thread.
 */
public final class NotificationQueue
{
    private final ConcurrentLinkedQueue<String> notifications = new ConcurrentLinkedQueue<>();
    private volatile Runnable listener = () -> { };

    /**
     * @param value run on the receiving thread after each {@link #add} (a consumer's wake-up).
     */
    public void listener(final Runnable value)
    {
        listener = value;
    }

    /**
     * Queue a notification without waking the consumer (several at once: {@link #wake} after the last).
     *
     * @param notification the notification, e.g. {@code "<remote_request_id>:<world size>"}.
     */
    public void offer(final String notification)
    {
        notifications.add(notification);
    }

    /**
     * Run the consumer's wake-up.
     */
    public void wake()
    {
        listener.run();
    }

    /**
     * Queue a notification and wake the consumer.
     *
     * @param notification the notification.
     */
    public void add(final String notification)
    {
        offer(notification);
        wake();
    }

    /**
     * Hand over the notifications queued so far, oldest first.
     *
     * @param sink takes each.
     * @return how many were handed over.
     */
    public int drain(final Consumer<String> sink)
    {
        int count = 0;
        String notification;
        while (null != (notification = notifications.poll()))
        {
            sink.accept(notification);
            count++;
        }
        return count;
    }
}
