package dev.tapedeck.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tapedeck play} as users run it, in its own process, against a frontend that never completes the handshake:
 * a failed handshake exits 1 with one line saying why, and SIGTERM during the handshake ends the process at once
 * instead of after the handshake timeout.
 */
@Timeout(90)
class PlayProcessIT
{
    @TempDir
    Path dir;

    private Process start(final String address, final String... flags) throws IOException
    {
        final String jar = System.getProperty("tapedeck.test.jar");
        assertTrue(null != jar && Files.isRegularFile(Path.of(jar)), "the shaded jar is built before ITs: " + jar);
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
            .toString(), "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-jar", jar, "play",
            "--handshake-address", address));
        command.addAll(List.of(flags));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("play.log").toFile())
            .start();
    }

    private String log() throws IOException
    {
        return Files.readString(dir.resolve("play.log"), StandardCharsets.UTF_8);
    }

    @Test
    void shouldExitOneWithOneLineWhenTheHandshakeFails() throws Exception
    {
        try (ZContext zmq = new ZContext())
        {
            final ZMQ.Socket silent = zmq.createSocket(SocketType.ROUTER);
            final String address = "tcp://127.0.0.1:" + silent.bindToRandomPort("tcp://127.0.0.1");
            final Process play = start(address, "--handshake-timeout", "1s");
            assertTrue(play.waitFor(60, TimeUnit.SECONDS), log());
            assertEquals(1, play.exitValue(), log());
            assertTrue(log().contains("tapedeck play: error: engine 0: no INIT from the frontend at " + address +
                " within the handshake timeout"), log());
        }
    }

    @Test
    void shouldEndAtOnceOnSigtermDuringTheHandshake() throws Exception
    {
        try (ZContext zmq = new ZContext())
        {
            final ZMQ.Socket silent = zmq.createSocket(SocketType.ROUTER);
            final String address = "tcp://127.0.0.1:" + silent.bindToRandomPort("tcp://127.0.0.1");
            final Process play = start(address); // the default handshake timeout: 5 minutes
            silent.setReceiveTimeOut(30_000);
            assertNotNull(silent.recv(0), "the engine said HELLO: " + log());
            play.toHandle().destroy(); // SIGTERM
            assertTrue(play.waitFor(30, TimeUnit.SECONDS), "ended well before the handshake timeout: " + log());
            assertTrue(log().contains("shutting down"), log());
            assertTrue(!log().contains("retrying") && !log().contains("Exception"), log());
        }
    }
}
