package dev.tapedeck.bench;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * What a JeroMQ PUSH send costs the sending thread when the sender does work between messages, as a {@code play}
 * engine steps between its {@code EngineCoreOutputs}: one message of {@code EngineCoreScaleBench}'s size (3,379
 * bytes) every {@code gap} microseconds of busy work, to a PULL in another context drained by its own thread, for
 * each gap given. While messages come faster than the sender's I/O thread writes them, the pipe never empties and a
 * send only queues; when they come slower, every send finds the I/O thread asleep and wakes it (a mailbox signal, a
 * system call, and on a busy box the woken thread often takes the sender's core). Prints messages/s and the mean
 * time a send takes, per gap.
 * <p>
 * Usage: {@code java -cp benchmarks.jar dev.tapedeck.bench.PacedSendBench [seconds=6] [gapMicros...=0,5,7,9,11,15]}.
 */
public final class PacedSendBench
{
    private static final int MESSAGE_BYTES = 3379;
    private static final long WARMUP_NS = TimeUnit.SECONDS.toNanos(2);

    private PacedSendBench()
    {
    }

    /**
     * @param args seconds measured per gap, then the gaps in microseconds.
     * @throws Exception on failure.
     */
    public static void main(final String[] args) throws Exception
    {
        final int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        final String[] gaps = args.length > 1 ? java.util.Arrays.copyOfRange(args, 1, args.length) :
            new String[] {"0", "5", "7", "9", "11", "15"};
        System.out.println("| gap between sends | messages/s | mean send() |\n|---:|---:|---:|");
        for (final String gap : gaps)
        {
            run(seconds, (long)(Double.parseDouble(gap) * 1000));
        }
    }

    private static void run(final int seconds, final long gapNs) throws Exception
    {
        final byte[] message = new byte[MESSAGE_BYTES];
        try (ZContext receiverContext = new ZContext(); ZContext senderContext = new ZContext())
        {
            final ZMQ.Socket pull = receiverContext.createSocket(SocketType.PULL);
            final int port = pull.bindToRandomPort("tcp://127.0.0.1");
            final Thread receiver = new Thread(() ->
            {
                for (byte[] m = pull.recv(0); null != m && m.length > 1; m = pull.recv(0))
                {
                    // drain
                }
            }, "paced-receiver");
            receiver.start();
            final ZMQ.Socket push = senderContext.createSocket(SocketType.PUSH);
            push.setHWM(0); // as the play engine's output socket
            push.connect("tcp://127.0.0.1:" + port);
            Thread.sleep(300);
            final long startNs = System.nanoTime();
            final long endNs = startNs + WARMUP_NS + TimeUnit.SECONDS.toNanos(seconds);
            long sendNs = 0;
            long sends = 0;
            for (long now = startNs; now < endNs; )
            {
                final long beforeNs = System.nanoTime();
                push.send(message.clone(), ZMQ.DONTWAIT);
                final long afterNs = System.nanoTime();
                if (beforeNs - startNs >= WARMUP_NS)
                {
                    sendNs += afterNs - beforeNs;
                    sends++;
                }
                do
                {
                    Thread.onSpinWait(); // the engine's step
                    now = System.nanoTime();
                }
                while (now - afterNs < gapNs);
            }
            push.send(new byte[1], 0);
            receiver.join();
            System.out.printf(Locale.ROOT, "| %.1f us | %,d | %.2f us |%n", gapNs / 1e3, sends / seconds,
                sendNs / 1e3 / Math.max(1, sends));
        }
    }
}
