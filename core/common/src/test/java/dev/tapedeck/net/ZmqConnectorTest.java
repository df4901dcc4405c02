package dev.tapedeck.net;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * {@link ZmqConnector} over real loopback TCP: every message sent after {@code open} arrives, a peer that binds late
 * is waited for, and a peer that never speaks ZeroMQ ends in a clear error at the deadline.
 */
final class ZmqConnectorTest
{
    private static final byte[] IDENTITY = {0, 0};

    /**
     * Plain JeroMQ loses about 3 in 100 of these connections (the connect completes at once and the I/O thread
     * drops the channel's registration); through the connector none may be lost. Without the connector's nudge the
     * chance that all 150 get through is under 1 in 100.
     */
    @Test
    void everyFreshLoopbackConnectionCarriesItsFirstMessage()
    {
        final int connections = 150;
        int stalls = 0;
        try (ZContext server = new ZContext())
        {
            for (int i = 0; i < connections; i++)
            {
                final ZMQ.Socket router = server.createSocket(SocketType.ROUTER);
                final int port = router.bindToRandomPort("tcp://127.0.0.1");
                router.setReceiveTimeOut(5000);
                try (ZContext client = new ZContext())
                {
                    final ZmqConnector connector = new ZmqConnector(ZmqConnector.DEFAULT_STALL_NS);
                    final ZMQ.Socket dealer = connector.open(client, SocketType.DEALER, s ->
                    {
                        s.setIdentity(IDENTITY);
                        s.setLinger(0);
                    }, "tcp://127.0.0.1:" + port, System.nanoTime() + TimeUnit.SECONDS.toNanos(20));
                    dealer.send("hello " + i);
                    assertArrayEquals(IDENTITY, router.recv(), "connection " + i + " lost its first message");
                    assertEquals("hello " + i, router.recvStr());
                    stalls += connector.stalls();
                }
                router.setLinger(0);
                router.close();
            }
        }
        System.out.println("ZmqConnectorTest: " + stalls + " nudges for " + connections + " connections");
    }

    @Test
    void aPeerThatNeverSpeaksZeroMqEndsInAClearErrorAtTheDeadline() throws Exception
    {
        final ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        final List<Socket> held = new CopyOnWriteArrayList<>();
        final Thread acceptor = new Thread(() ->
        {
            try
            {
                while (!silent.isClosed())
                {
                    held.add(silent.accept()); // accepts and never answers, as a non-ZeroMQ service may
                }
            }
            catch (final IOException ignored)
            {
                // closed by the test
            }
        });
        acceptor.start();
        final ZmqConnector connector = new ZmqConnector(TimeUnit.MILLISECONDS.toNanos(100));
        final IllegalStateException error;
        try (ZContext context = new ZContext())
        {
            error = assertThrows(IllegalStateException.class,
                () -> connector.open(context, SocketType.DEALER, s -> s.setLinger(0),
                    "tcp://127.0.0.1:" + silent.getLocalPort(), System.nanoTime() + TimeUnit.SECONDS.toNanos(1)));
        }
        finally
        {
            silent.close();
            acceptor.join();
            for (final Socket socket : held)
            {
                socket.close();
            }
        }
        assertTrue(connector.stalls() >= 1);
        assertTrue(error.getMessage().contains("never completed a ZeroMQ handshake"), error.getMessage());
    }

    @Test
    void waitsForAPeerThatBindsLater() throws Exception
    {
        final int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            port = probe.getLocalPort();
        }
        try (ZContext context = new ZContext())
        {
            final ZMQ.Socket[] router = new ZMQ.Socket[1];
            final Thread later = new Thread(() ->
            {
                try
                {
                    Thread.sleep(300);
                }
                catch (final InterruptedException e)
                {
                    Thread.currentThread().interrupt();
                }
                router[0] = context.createSocket(SocketType.ROUTER);
                router[0].bind("tcp://127.0.0.1:" + port);
            });
            later.start();
            final ZMQ.Socket dealer = new ZmqConnector(ZmqConnector.DEFAULT_STALL_NS).open(context, SocketType.DEALER,
                s -> s.setIdentity(IDENTITY), "tcp://127.0.0.1:" + port,
                System.nanoTime() + TimeUnit.SECONDS.toNanos(20));
            later.join();
            dealer.send("late");
            router[0].setReceiveTimeOut(5000);
            assertArrayEquals(IDENTITY, router[0].recv());
            assertEquals("late", router[0].recvStr());
        }
    }
}
