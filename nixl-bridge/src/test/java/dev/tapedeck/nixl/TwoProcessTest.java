package dev.tapedeck.nixl;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.tapedeck.nixl.sidechannel.Handshake;
import dev.tapedeck.nixl.sidechannel.SideChannelClient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A prefill in a child JVM ({@link TcpPrefillMain}), a decode here: handshake over ZeroMQ, blocks over tcp, the
 * notification back, both ways (with the read, and over the side channel).
 */
class TwoProcessTest
{
    @Test
    void decodePullsFromAPrefillInAnotherJvm() throws Exception
    {
        final String classPath = System.getProperty("surefire.test.class.path",
            System.getProperty("java.class.path"));
        final String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        final Process child = new ProcessBuilder(java, "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-Djava.net.preferIPv4Stack=true", "-cp", classPath, TcpPrefillMain.class.getName(), "prefill-child", "2")
            .redirectErrorStream(true).start();
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final Thread pump = new Thread(() ->
        {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(child.getInputStream(),
                StandardCharsets.UTF_8)))
            {
                String line;
                while (null != (line = reader.readLine()))
                {
                    lines.add(line);
                }
            }
            catch (final IOException ignored)
            {
                // the child is gone
            }
        });
        pump.setDaemon(true);
        pump.start();
        try (SideChannelClient client = new SideChannelClient(5_000, TcpPrefillMain.HASH);
            TcpDataPlane decode = new TcpDataPlane(new KvDataPlaneSettings("tcp", "decode", TcpPrefillMain.NUM_BLOCKS,
                TcpPrefillMain.BLOCK_BYTES, "127.0.0.1")))
        {
            final String ready = awaitLine(lines, "READY ");
            final int sidePort = Integer.parseInt(ready.split(" ")[1]);
            final Handshake handshake = client.fetch("127.0.0.1", sidePort, 0, "prefill-child")
                .get(10, TimeUnit.SECONDS);
            assertEquals("tcp", handshake.metadata().plane());
            assertEquals(TcpPrefillMain.NUM_BLOCKS, handshake.metadata().numBlocks());
            assertEquals(List.of((long)TcpPrefillMain.BLOCK_BYTES), handshake.metadata().blockLens());
            assertEquals(ready.split(" ")[2], new String(handshake.metadata().agentMetadata(), StandardCharsets.UTF_8));

            final KvPeer peer = decode.addPeer("prefill-child", handshake.metadata().agentMetadata())
                .get(5, TimeUnit.SECONDS);
            final int[] local = {0, 1, 2};
            final PullResult result = decode.read(peer, new int[] {2, 5, 9}, local,
                "req-1:1".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
            assertEquals(3L * TcpPrefillMain.BLOCK_BYTES, result.bytes());
            TcpDataPlaneTest.verify(decode.pool(), "req-1", local);
            assertEquals("NOTIF plane req-1:1", awaitLine(lines, "NOTIF "));

            client.notify("127.0.0.1", sidePort, "req-2:1").get(10, TimeUnit.SECONDS);
            assertEquals("NOTIF side req-2:1", awaitLine(lines, "NOTIF "));
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child did not exit");
            assertEquals(0, child.exitValue());
        }
        finally
        {
            child.destroyForcibly();
        }
    }

    private static String awaitLine(final BlockingQueue<String> lines, final String prefix) throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        final StringBuilder seen = new StringBuilder();
        while (System.nanoTime() < deadlineNs)
        {
            final String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (null != line)
            {
                if (line.startsWith(prefix))
                {
                    return line;
                }
                seen.append(line).append('\n');
            }
        }
        assertNotNull(null, "no line starting with '" + prefix + "' from the child within 30 s; it printed:\n" + seen);
        return null;
    }
}
