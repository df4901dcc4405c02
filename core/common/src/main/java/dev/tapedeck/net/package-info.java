/**
 * Networking shared by the faces, the record tap and the load client: Netty's I/O {@link Transport}s (epoll, io_uring,
 * NIO), {@link LoopThreads}, which names event-loop threads ({@code tapedeck-http-n}, {@code tapedeck-load-n}),
 * {@link JsonBytes}, which writes escaped JSON straight into a {@code ByteBuf}, and {@link ZmqConnector}, which opens a
 * connecting JeroMQ socket and returns it once its handshake has completed (healing a JeroMQ defect on loopback).
 * <p>
 * Depends on nothing else of tapedeck (the common module depends on no other, and {@code CommonArchitectureTest} keeps
 * its packages apart).
 * <p>
 * <b>Threading</b>: {@link JsonBytes} is stateless, {@link Transport} immutable and {@link LoopThreads} thread safe,
 * all usable from any thread. A {@link ZmqConnector} is not thread safe: it is used on the thread that will own the
 * sockets it opens (JeroMQ sockets are thread-confined).
 */
package dev.tapedeck.net;
