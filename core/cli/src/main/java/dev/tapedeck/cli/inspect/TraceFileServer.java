package dev.tapedeck.cli.inspect;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * Serves one trace file on 127.0.0.1 at {@code /trace.json} for the Perfetto UI to fetch
 * ({@code https://ui.perfetto.dev/#!/?url=http://127.0.0.1:<port>/trace.json}): GET and HEAD with
 * {@code Access-Control-Allow-Origin: *}, CORS and private-network preflights answered, anything else 404 or 405.
 * <p>
 * ui.perfetto.dev's Content-Security-Policy lets the page fetch from {@code http://127.0.0.1:9001} (the port of
 * trace_processor's RPC server) and not from other local ports, so {@link #PERFETTO_PORT} is the port that works from
 * the hosted UI; any port works for other clients.
 * <p>
 * The JDK's HTTP server on one thread of its own; {@link #close()} may be called from any thread, more than once.
 */
public final class TraceFileServer implements Closeable
{
    /** The local port ui.perfetto.dev may fetch from. */
    public static final int PERFETTO_PORT = 9001;
    /** The path the file is served at. */
    public static final String PATH = "/trace.json";

    private final HttpServer server;
    private final ExecutorService executor;
    private final Path file;
    private final CountDownLatch closed = new CountDownLatch(1);

    private TraceFileServer(final HttpServer server, final ExecutorService executor, final Path file)
    {
        this.server = server;
        this.executor = executor;
        this.file = file;
    }

    /**
     * Start serving.
     *
     * @param file the file to serve.
     * @param port the port on 127.0.0.1; 0 picks a free one.
     * @return the running server.
     * @throws IOException if the port cannot be bound.
     */
    public static TraceFileServer start(final Path file, final int port) throws IOException
    {
        if (!Files.isRegularFile(file))
        {
            throw new java.nio.file.NoSuchFileException(file.toString(), null, "no such file");
        }
        final HttpServer server;
        try
        {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port), 16);
        }
        catch (final java.net.BindException ex)
        {
            throw new java.net.BindException("127.0.0.1:" + port + " is in use (" + ex.getMessage() + ")" +
                (PERFETTO_PORT == port ? "; is trace_processor_shell running? --port 0 picks a free port" : ""));
        }
        final ExecutorService executor = Executors.newSingleThreadExecutor(runnable ->
        {
            final Thread thread = new Thread(runnable, "tapedeck-trace-server");
            thread.setDaemon(true);
            return thread;
        });
        final TraceFileServer traceServer = new TraceFileServer(server, executor, file);
        server.createContext("/", traceServer::handle);
        server.setExecutor(executor);
        server.start();
        return traceServer;
    }

    /**
     * @return the bound port.
     */
    public int port()
    {
        return server.getAddress().getPort();
    }

    /**
     * @return {@code http://127.0.0.1:<port>/trace.json}.
     */
    public String traceUrl()
    {
        return "http://127.0.0.1:" + port() + PATH;
    }

    /**
     * @return the Perfetto UI link that opens the served file.
     */
    public String perfettoUrl()
    {
        return "https://ui.perfetto.dev/#!/?url=" + traceUrl();
    }

    /**
     * Block until {@link #close()} is called.
     *
     * @throws InterruptedException if the waiting thread is interrupted.
     */
    public void awaitClosed() throws InterruptedException
    {
        closed.await();
    }

    /**
     * Stop serving at once (an exchange in progress is cut off) and release the port.
     */
    @Override
    public void close()
    {
        if (0 == closed.getCount())
        {
            return;
        }
        server.stop(0);
        executor.shutdownNow();
        closed.countDown();
    }

    private void handle(final HttpExchange exchange) throws IOException
    {
        try (exchange)
        {
            final Headers headers = exchange.getResponseHeaders();
            headers.set("Access-Control-Allow-Origin", "*");
            headers.set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS");
            headers.set("Access-Control-Allow-Headers", "*");
            headers.set("Access-Control-Allow-Private-Network", "true");
            headers.set("Cache-Control", "no-store");
            final String method = exchange.getRequestMethod();
            if (!PATH.equals(exchange.getRequestURI().getPath()))
            {
                exchange.sendResponseHeaders(404, -1);
                return;
            }
            switch (method)
            {
                case "OPTIONS" -> exchange.sendResponseHeaders(204, -1);
                case "HEAD" ->
                {
                    headers.set("Content-Type", "application/json");
                    exchange.sendResponseHeaders(200, -1);
                }
                case "GET" ->
                {
                    headers.set("Content-Type", "application/json");
                    exchange.sendResponseHeaders(200, Files.size(file));
                    try (OutputStream body = exchange.getResponseBody())
                    {
                        Files.copy(file, body);
                    }
                }
                default ->
                {
                    headers.set("Allow", "GET, HEAD, OPTIONS");
                    exchange.sendResponseHeaders(405, -1);
                }
            }
        }
    }
}
