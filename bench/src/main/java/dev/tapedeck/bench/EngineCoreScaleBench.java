package dev.tapedeck.bench;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.net.ZmqConnector;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;
import dev.tapedeck.protocol.enginecore.EngineCoreOutputsEncoder;
import dev.tapedeck.protocol.enginecore.SchedulerStats;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.MsgPackWriter;

/**
 * The engine-core output path end to end over ZeroMQ loopback TCP: a frontend (handshake ROUTER, input ROUTER,
 * output PULL) drives one {@code play} engine with 256 long requests and counts the EngineCoreOutputs messages and
 * tokens it receives; then raw JeroMQ PUSH/PULL sends the same bytes (a 256-output message) as fast as it can: the
 * ceiling. Both receivers decode every message the same way (counting tokens). Prints messages/s and tokens/s, quiet
 * and, with competitor threads, again beside a {@link CpuCompetitor} pinned to the given CPUs; the CPU the whole
 * process (sender or engine, both sides' I/O threads, the receiver) and the sending thread spent per message over the
 * window, and by group of threads ({@link ThreadGroupCpu}: sending, ZeroMQ I/O, receiver, GC, JIT); and, before the
 * requests arrive, the CPU time the idle engine's thread takes per second. With rounds above
 * one, the pairs run in ABBA order (odd rounds measure the ceiling first) and the median ratio follows.
 * <p>
 * Usage: {@code java -cp benchmarks.jar dev.tapedeck.bench.EngineCoreScaleBench [seconds=10] [stepMicros=20]
 * [competitorThreads=0] [competitorCpus=0] [engines=1] [rounds=1]} (engines: data-parallel engines sharing the 256
 * requests).
 */
public final class EngineCoreScaleBench
{
    private static final int RUNNING = 256;
    private static final String RAW_SENDER = "raw-sender";
    private static final int IDLE_SECONDS = 3;
    private static final java.lang.management.ThreadMXBean THREADS =
        java.lang.management.ManagementFactory.getThreadMXBean();
    private static final com.sun.management.OperatingSystemMXBean PROCESS =
        (com.sun.management.OperatingSystemMXBean)java.lang.management.ManagementFactory.getOperatingSystemMXBean();

    private EngineCoreScaleBench()
    {
    }

    /**
     * @param args seconds to measure, step duration in microseconds, competitor threads, their CPUs, engines, rounds.
     * @throws Exception on failure.
     */
    public static void main(final String[] args) throws Exception
    {
        final int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        final double stepMicros = args.length > 1 ? Double.parseDouble(args[1]) : 20;
        final int competitorThreads = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        final String competitorCpus = args.length > 3 ? args[3] : "0";
        final int engines = args.length > 4 ? Integer.parseInt(args[4]) : 1;
        final int rounds = args.length > 5 ? Integer.parseInt(args[5]) : 1;
        final StringBuilder table = new StringBuilder("| round | contention | path | messages/s | tokens/s | " +
            "bytes/message | process CPU per message | sending thread's CPU per message |\n" +
            "|---:|---|---|---:|---:|---:|---:|---:|\n");
        final StringBuilder ratios = new StringBuilder();
        final StringBuilder groups = new StringBuilder("| round | contention | path | " +
            String.join(" | ", ThreadGroupCpu.NAMES) + " |\n|---:|---|---|" +
            "---:|".repeat(ThreadGroupCpu.NAMES.length) + "\n");
        for (final int threads : competitorThreads > 0 ? new int[] {0, competitorThreads} : new int[] {0})
        {
            final String contention = CpuCompetitor.describe(threads, competitorCpus);
            final Process competitor = CpuCompetitor.start(threads, competitorCpus);
            final double[] roundRatios = new double[rounds];
            try
            {
                for (int round = 1; round <= rounds; round++)
                {
                    // ABBA: odd rounds measure the ceiling first, even rounds play first
                    final double[] raw = 1 == round % 2 ? raw(seconds) : null;
                    final double[] play = play(seconds, stepMicros, engines);
                    final double[] ceiling = null != raw ? raw : raw(seconds);
                    table.append(String.format(Locale.ROOT, "| %d | %s | tapedeck play (step %.0f us, %d running " +
                        "over %d engine(s)) | %,.0f | %,.0f | %,.0f | %.1f us | %.1f us |%n", round, contention,
                        stepMicros, RUNNING, engines, play[0], play[1], play[2], play[4], play[5]));
                    table.append(String.format(Locale.ROOT, "| %d | %s | raw JeroMQ PUSH/PULL, same bytes | %,.0f | " +
                        "%,.0f | %,.0f | %.1f us | %.1f us |%n", round, contention, ceiling[0], ceiling[1], ceiling[2],
                        ceiling[4], ceiling[5]));
                    groups.append(ThreadGroupCpu.row(round, contention, "tapedeck play", play, 6));
                    groups.append(ThreadGroupCpu.row(round, contention, "raw JeroMQ", ceiling, 6));
                    roundRatios[round - 1] = play[1] / ceiling[1];
                    ratios.append(String.format(Locale.ROOT, "%s, round %d: tapedeck delivers %.2fx the ceiling's " +
                        "tokens/s; an idle engine thread uses %.1f ms of CPU per second%n", contention, round,
                        roundRatios[round - 1], play[3]));
                }
            }
            finally
            {
                CpuCompetitor.stop(competitor);
            }
            if (rounds > 1)
            {
                ratios.append(String.format(Locale.ROOT, "%s: median of %d rounds %.2fx (%.2f-%.2fx)%n", contention,
                    rounds, ScaleBench.median(roundRatios), java.util.Arrays.stream(roundRatios).min().orElse(0),
                    java.util.Arrays.stream(roundRatios).max().orElse(0)));
            }
        }
        System.out.println();
        System.out.print(table);
        System.out.println();
        System.out.println("CPU per message by thread (us, from /proc/self/task over the window; sending: the engine " +
            "or the raw sender; receiver: the frontend's counting thread):");
        System.out.print(groups);
        System.out.print(ratios);
    }

    private static byte[] typicalMessage()
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(64 * 1024);
        final EngineCoreOutputsEncoder encoder = new EngineCoreOutputsEncoder().begin(buffer, VllmLine.NEWEST, 0);
        for (int i = 0; i < RUNNING; i++)
        {
            encoder.output(("bench-" + i).getBytes(StandardCharsets.UTF_8), new int[] {1000 + i}, 0, 1,
                EngineCoreOutputsEncoder.NO_FINISH, EngineCoreOutputsEncoder.NONE, null, 8,
                EngineCoreOutputsEncoder.NONE);
        }
        final SchedulerStats stats = new SchedulerStats();
        stats.numRunningReqs = RUNNING;
        final int length = encoder.end(stats, 1.0, null, 0);
        final byte[] bytes = new byte[length];
        buffer.getBytes(0, bytes);
        return bytes;
    }

    private static double[] raw(final int seconds) throws Exception
    {
        final byte[] message = typicalMessage();
        try (ZContext context = new ZContext())
        {
            final ZMQ.Socket pull = context.createSocket(SocketType.PULL);
            final int port = pull.bindToRandomPort("tcp://127.0.0.1");
            pull.setReceiveTimeOut(100);
            final AtomicBoolean running = new AtomicBoolean(true);
            final Thread sender = new Thread(() ->
            {
                // a context of its own, as the engine has: its own I/O thread, as two processes would have
                try (ZContext senderContext = new ZContext())
                {
                    final ZMQ.Socket push = new ZmqConnector(ZmqConnector.DEFAULT_STALL_NS).open(senderContext,
                        SocketType.PUSH, s -> s.setSndHWM(1000), "tcp://127.0.0.1:" + port,
                        System.nanoTime() + TimeUnit.SECONDS.toNanos(30));
                    while (running.get())
                    {
                        // never block on a full queue: the receiver stops reading before the sender stops
                        push.send(message.clone(), ZMQ.DONTWAIT);
                    }
                    push.setLinger(0);
                    push.close();
                }
            });
            sender.setName(RAW_SENDER);
            sender.start();
            final MsgPackReader reader = new MsgPackReader();
            countFor(pull, reader, 2, new AtomicLong());
            final AtomicLong tokens = new AtomicLong();
            final long[] cpuBefore = cpuNs(new long[] {sender.getId()});
            final long[] groupsBefore = ThreadGroupCpu.sample();
            final long[] counts = countFor(pull, reader, seconds, tokens);
            final long[] groupsAfter = ThreadGroupCpu.sample();
            final long[] cpuAfter = cpuNs(new long[] {sender.getId()});
            running.set(false);
            sender.join();
            return withGroups(new double[] {counts[0] / (double)seconds, tokens.get() / (double)seconds,
                message.length, 0, perMessageUs(cpuAfter[0] - cpuBefore[0], counts[0]),
                perMessageUs(cpuAfter[1] - cpuBefore[1], counts[0])}, groupsBefore, groupsAfter, counts[0]);
        }
    }

    private static double[] play(final int seconds, final double stepMicros, final int engines) throws Exception
    {
        try (ZContext context = new ZContext())
        {
            final ZMQ.Socket handshake = context.createSocket(SocketType.ROUTER);
            final String handshakeAddress = "tcp://127.0.0.1:" + handshake.bindToRandomPort("tcp://127.0.0.1");
            final ZMQ.Socket input = context.createSocket(SocketType.ROUTER);
            final String inputAddress = "tcp://127.0.0.1:" + input.bindToRandomPort("tcp://127.0.0.1");
            final ZMQ.Socket output = context.createSocket(SocketType.PULL);
            final String outputAddress = "tcp://127.0.0.1:" + output.bindToRandomPort("tcp://127.0.0.1");
            output.setReceiveTimeOut(100);
            final EngineConfig config = EngineStepBenchmark.roomyConfig(RUNNING / engines, RUNNING)
                .latencyModel(new StepLatencyModel(new StepCoefficients("bench", stepMicros, 0, 0, 0, 0, "bench")));
            final Play server = Play.start(new PlayContext().handshakeAddress(handshakeAddress).engineCount(engines)
                .handshakeTimeoutNs(TimeUnit.SECONDS.toNanos(30)).shutdownTimeoutNs(0).engine(config));
            final byte[][] identities = new byte[engines][];
            for (int e = 0; e < engines; e++)
            {
                final ZMsg hello = ZMsg.recvMsg(handshake);
                identities[e] = hello.pop().getData();
                handshake.sendMore(identities[e]);
                handshake.send(init(inputAddress, outputAddress));
            }
            for (int e = 0; e < engines; e++)
            {
                ZMsg.recvMsg(input); // registration
                ZMsg.recvMsg(handshake); // READY
            }
            final double idleCpuMsPerS = idleEngineCpu(IDLE_SECONDS);
            final MsgPackWriter writer = new MsgPackWriter();
            final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(256);
            for (int i = 0; i < RUNNING; i++)
            {
                writer.wrap(buffer, 0).arrayHeader(14).string("bench-" + i).arrayHeader(8);
                for (int t = 0; t < 8; t++)
                {
                    writer.int64(100 + t);
                }
                writer.nil().mapHeader(2).string("max_tokens").int64((1 << 24) - 8).string("ignore_eos").bool(true)
                    .nil().float64(0.0).nil().nil().nil().nil().nil().int64(0).int64(0).int64(0);
                final byte[] add = new byte[writer.length()];
                buffer.getBytes(0, add);
                input.sendMore(identities[i % engines]);
                input.sendMore(new byte[] {0});
                input.send(add);
            }
            final MsgPackReader reader = new MsgPackReader();
            countFor(output, reader, 2, new AtomicLong());
            final AtomicLong tokens = new AtomicLong();
            final long[] engineThreads = engineThreadIds();
            final long[] cpuBefore = cpuNs(engineThreads);
            final long[] groupsBefore = ThreadGroupCpu.sample();
            final long[] counts = countFor(output, reader, seconds, tokens);
            final long[] groupsAfter = ThreadGroupCpu.sample();
            final long[] cpuAfter = cpuNs(engineThreads);
            server.shutdown(0);
            return withGroups(new double[] {counts[0] / (double)seconds, tokens.get() / (double)seconds,
                counts[1] / (double)Math.max(counts[0], 1), idleCpuMsPerS,
                perMessageUs(cpuAfter[0] - cpuBefore[0], counts[0]),
                perMessageUs(cpuAfter[1] - cpuBefore[1], counts[0])}, groupsBefore, groupsAfter, counts[0]);
        }
    }

    /**
     * @return the CPU time the engine threads spend per second of wall time while they have no request: what an idle
     *     engine costs the cores it shares.
     */
    private static double idleEngineCpu(final int seconds) throws InterruptedException
    {
        final long[] engineThreads = engineThreadIds();
        Thread.sleep(500); // past the idle strategy's spinning and yielding
        final long startCpuNs = cpuNs(engineThreads)[1];
        final long startNs = System.nanoTime();
        Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
        return (cpuNs(engineThreads)[1] - startCpuNs) / 1e6 / ((System.nanoTime() - startNs) / 1e9);
    }

    private static long[] engineThreadIds()
    {
        return java.util.Arrays.stream(THREADS.dumpAllThreads(false, false))
            .filter(info -> info.getThreadName().startsWith("tapedeck-engine-"))
            .mapToLong(java.lang.management.ThreadInfo::getThreadId).toArray();
    }

    /**
     * @return the process's CPU time (every thread of this JVM: sender or engine, both contexts' I/O threads, the
     *     receiver), and the CPU time of {@code threads}, in nanoseconds.
     */
    private static long[] cpuNs(final long[] threads)
    {
        long threadsNs = 0;
        for (final long thread : threads)
        {
            threadsNs += THREADS.getThreadCpuTime(thread);
        }
        return new long[] {PROCESS.getProcessCpuTime(), threadsNs};
    }

    /** {@code figures} followed by each thread group's CPU per message over the window, in microseconds. */
    private static double[] withGroups(final double[] figures, final long[] before, final long[] after,
        final long messages)
    {
        final double[] groups = ThreadGroupCpu.perMessageUs(before, after, messages);
        final double[] all = java.util.Arrays.copyOf(figures, figures.length + groups.length);
        System.arraycopy(groups, 0, all, figures.length, groups.length);
        return all;
    }

    private static double perMessageUs(final long cpuNs, final long messages)
    {
        return cpuNs / 1e3 / Math.max(1, messages);
    }

    private static long[] countFor(final ZMQ.Socket output, final MsgPackReader reader, final int seconds,
        final AtomicLong tokens)
    {
        final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
        long messages = 0;
        long bytes = 0;
        while (System.nanoTime() < end)
        {
            final byte[] message = output.recv(0);
            if (null == message)
            {
                continue;
            }
            messages++;
            bytes += message.length;
            view.wrap(message);
            reader.wrap(view, 0, message.length);
            reader.readArrayHeader();
            reader.skipValue();
            final int outputs = reader.readArrayHeader();
            for (int i = 0; i < outputs; i++)
            {
                final int fields = reader.readArrayHeader();
                reader.skipValue();
                final int count = reader.readArrayHeader();
                tokens.addAndGet(count);
                for (int t = 0; t < count; t++)
                {
                    reader.skipValue();
                }
                for (int f = 2; f < fields; f++)
                {
                    reader.skipValue();
                }
            }
        }
        return new long[] {messages, bytes};
    }

    private static byte[] init(final String input, final String output)
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(256);
        final MsgPackWriter writer = new MsgPackWriter().wrap(buffer, 0);
        writer.mapHeader(2).string("addresses").mapHeader(5).string("inputs").arrayHeader(1).string(input)
            .string("outputs").arrayHeader(1).string(output).string("coordinator_input").nil()
            .string("coordinator_output").nil().string("frontend_stats_publish_address").nil()
            .string("parallel_config").mapHeader(0);
        final byte[] bytes = new byte[writer.length()];
        buffer.getBytes(0, bytes);
        return bytes;
    }
}
