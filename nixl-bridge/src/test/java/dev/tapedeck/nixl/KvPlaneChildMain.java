package dev.tapedeck.nixl;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

/**
 * The child JVM of the two-process tests; it talks to its parent over stdout lines.
 * <ul>
 * <li>{@code prefill <kind> <engineId> <numBlocks> <blockBytes> <requestId> <blockIds,...>}: opens the plane, fills
 * the blocks with {@link KvBlockPattern}, prints {@code KVB1 <base64 metadata>}, then prints {@code NOTIF <text>}
 * for every notification until stdin closes, and exits 0.</li>
 * <li>{@code npe}: opens a {@code ucx} plane, then makes JIT-compiled code take millions of implicit null checks;
 * prints {@code NPES <count>} and exits 0, unless a signal handler installed by UCX kills the JVM.</li>
 * <li>{@code factory <kind>}: prints {@code PLANE <opened kind>} and {@code FALLBACK <reason>} lines.</li>
 * </ul>
 * Single-threaded apart from the plane's I/O thread and a stdin watcher.
 */
public final class KvPlaneChildMain
{
    private static final int NPE_ITERATIONS = 5_000_000;

    private KvPlaneChildMain()
    {
    }

    /**
     * @param args the mode and its arguments (see the class comment).
     * @throws Exception on any failure: the exit code is then non-zero.
     */
    public static void main(final String[] args) throws Exception
    {
        switch (args[0])
        {
            case "prefill":
                prefill(args);
                break;
            case "npe":
                npe();
                break;
            case "factory":
                factory(args[1]);
                break;
            default:
                throw new IllegalArgumentException("unknown mode " + args[0]);
        }
        System.out.flush();
    }

    private static KvDataPlane open(final String kind, final String engineId, final int numBlocks,
        final int blockBytes)
    {
        final KvDataPlaneSettings settings = new KvDataPlaneSettings(kind, engineId, numBlocks, blockBytes,
            "127.0.0.1");
        switch (kind)
        {
            case "nixl":
                return new NixlDataPlane(settings);
            case "tcp":
                return new TcpDataPlane(settings);
            default:
                return new UcxDataPlane(settings);
        }
    }

    private static void prefill(final String[] args) throws IOException, InterruptedException
    {
        final int numBlocks = Integer.parseInt(args[3]);
        final int blockBytes = Integer.parseInt(args[4]);
        final String requestId = args[5];
        final int[] blocks = Arrays.stream(args[6].split(",")).mapToInt(Integer::parseInt).toArray();
        try (KvDataPlane plane = open(args[1], args[2], numBlocks, blockBytes))
        {
            for (int i = 0; i < blocks.length; i++)
            {
                KvBlockPattern.fill(plane.pool().block(blocks[i]), KvBlockPattern.seed(requestId, i));
            }
            System.out.println("KVB1 " + Base64.getEncoder().encodeToString(plane.agentMetadata()));
            System.out.flush();
            final Thread stdinWatcher = new Thread(KvPlaneChildMain::awaitStdinClosed, "stdin-watcher");
            stdinWatcher.setDaemon(true);
            stdinWatcher.start();
            while (stdinWatcher.isAlive())
            {
                plane.drainNotifications(text ->
                {
                    System.out.println("NOTIF " + text);
                    System.out.flush();
                });
                Thread.sleep(1);
            }
        }
        System.out.println("CLOSED");
    }

    private static void awaitStdinClosed()
    {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)))
        {
            while (in.readLine() != null)
            {
                continue;
            }
        }
        catch (final IOException ex)
        {
            return;
        }
    }

    private static void npe()
    {
        try (KvDataPlane plane = open("ucx", "npe-probe", 4, 4096))
        {
            System.out.println("OPENED " + plane.kind() + " " + KvBridgeNative.version());
            final int[] array = {1};
            long sum = 0;
            long npes = 0;
            for (int i = 0; i < NPE_ITERATIONS; i++)
            {
                final int[] a = (i % 1024 == 0) ? null : array;
                try
                {
                    sum += a[0];
                }
                catch (final NullPointerException ex)
                {
                    npes++;
                }
            }
            System.out.println("NPES " + npes + " SUM " + sum);
        }
    }

    private static void factory(final String kind)
    {
        final KvDataPlanes.Opened opened = KvDataPlanes.open(new KvDataPlaneSettings(kind, "factory-probe", 4, 4096,
            "127.0.0.1"));
        try (KvDataPlane plane = opened.plane())
        {
            System.out.println("PLANE " + plane.kind());
            for (final String fallback : opened.fallbacks())
            {
                System.out.println("FALLBACK " + fallback);
            }
        }
    }
}
