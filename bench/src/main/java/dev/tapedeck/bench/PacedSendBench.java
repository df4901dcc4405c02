package dev.tapedeck.bench;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import dev.tapedeck.net.ZmqConnector;

/**
 * What a JeroMQ PUSH send costs the sending thread when the sender does work between messages, as a {@code play}
 * engine steps between its {@code EngineCoreOutputs}: one message of {@code EngineCoreScaleBench}'s size (3,379
 * bytes) every {@code gap} microseconds of busy work, to a PULL in another context drained by the main thread, for
 * each gap given. While messages come faster than the sender's I/O thread writes them, the pipe never empties and a
 * send only queues; when they come slower, every send finds the I/O thread asleep and wakes it (a mailbox signal, a
 * system call, and on a busy box the woken thread often takes the sender's core). Prints messages/s, the mean time a
 * send takes, and the CPU per message of the sending thread, of both contexts' I/O threads and of the receiving
 * thread ({@link ThreadGroupCpu}, over the measured window, per message received from it), per gap: I/O threads
 * that take about as much CPU per message as the gap between messages are spinning, not sleeping, between them.
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
        System.out.println("| gap between sends | messages/s | mean send() | CPU per message: sending thread | " +
            "ZeroMQ I/O threads | receiver |\n|---:|---:|---:|---:|---:|---:|");
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
            // written by the sender, read after join: nanoseconds in send() and sends in the window; the thread groups'
            // CPU at the window's start and end
            final long[] sendTotals = new long[2];
            final long[][] cpu = new long[2][];
            final Thread sender = new Thread(() ->
            {
                // opened on the thread that sends, through the connector that waits out JeroMQ's silent loopback
                // connections; the queue bounded as the ceiling sender's in EngineCoreScaleBench: a paced sender
                // never fills it, an unpaced one (gap 0) would otherwise queue gigabytes; a send that finds it full
                // fails and is not counted
                final ZMQ.Socket push = new ZmqConnector(ZmqConnector.DEFAULT_STALL_NS).open(senderContext,
                    SocketType.PUSH, socket -> socket.setSndHWM(1000), "tcp://127.0.0.1:" + port,
                    System.nanoTime() + TimeUnit.SECONDS.toNanos(30));
                sendPaced(push, message, gapNs, seconds, sendTotals, cpu);
            }, "raw-sender");
            sender.start();
            long received = 0; // messages sent in the window (marked in their first byte)
            for (byte[] m = pull.recv(0); null != m && m.length > 1; m = pull.recv(0))
            {
                received += m[0];
            }
            sender.join();
            final double[] groupUs = ThreadGroupCpu.perMessageUs(cpu[0], cpu[1], received);
            System.out.printf(Locale.ROOT, "| %.1f us | %,d | %.2f us | %.2f us | %.2f us | %.2f us |%n", gapNs / 1e3,
                sendTotals[1] / seconds, sendTotals[0] / 1e3 / Math.max(1, sendTotals[1]), groupUs[0], groupUs[1],
                groupUs[2]);
        }
    }

    /** The sending thread: a send every {@code gapNs} of busy work; a one-byte message ends the receiver's loop. */
    private static void sendPaced(final ZMQ.Socket push, final byte[] message, final long gapNs, final int seconds,
        final long[] sendTotals, final long[][] cpu)
    {
        final long startNs = System.nanoTime();
        final long endNs = startNs + WARMUP_NS + TimeUnit.SECONDS.toNanos(seconds);
        for (long now = startNs; now < endNs; )
        {
            if (null == cpu[0] && System.nanoTime() - startNs >= WARMUP_NS)
            {
                cpu[0] = ThreadGroupCpu.sample(); // before the timed send: the sample reads /proc
            }
            final long beforeNs = System.nanoTime();
            final byte[] copy = message.clone();
            copy[0] = (byte)(null != cpu[0] ? 1 : 0);
            final boolean sent = push.send(copy, ZMQ.DONTWAIT);
            final long afterNs = System.nanoTime();
            if (sent && null != cpu[0])
            {
                sendTotals[0] += afterNs - beforeNs;
                sendTotals[1]++;
            }
            do
            {
                Thread.onSpinWait(); // the engine's step
                now = System.nanoTime();
            }
            while (now - afterNs < gapNs);
        }
        cpu[1] = ThreadGroupCpu.sample();
        push.send(new byte[1], 0);
    }
}
