package dev.tapedeck.load.client;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.agrona.concurrent.ManyToManyConcurrentArrayQueue;

import dev.tapedeck.net.LoopThreads;
import dev.tapedeck.net.Transport;

/**
 * The load generator's HTTP/1.1 client: a few event loops and, per loop and server, a "lane" with its own keep-alive
 * connections, running streaming and non-streaming OpenAI requests ({@link Exchange}) and timing every token-bearing
 * event. A connection carries one exchange at a time (no pipelining), so N concurrent streams use N connections.
 * <p>
 * A prefill/decode client ({@link #prefillDecode}) is the two-hop client of P/D disaggregation, as vLLM's proxy is:
 * each loop has a lane to the prefill server and one to the decode server, an exchange is sent to the prefill server
 * first and, when its answer carries {@code kv_transfer_params}, to the decode server on the same loop.
 * <p>
 * {@link #submit} and the spare methods are thread safe (exchanges are spread over the lanes round robin, so over
 * several servers in turn; a spare runs on the lane of the exchange it replaces); everything else about an exchange
 * happens on its lane's event loop.
 */
public final class LoadClient implements AutoCloseable
{
    private static final int MAX_SPARES = 4096;

    private final EventLoopGroup group;
    private final List<Lane> lanes = new ArrayList<>();
    private final List<Lane> entries;
    private final AtomicInteger next = new AtomicInteger();
    private final ManyToManyConcurrentArrayQueue<Exchange> spares = new ManyToManyConcurrentArrayQueue<>(MAX_SPARES);

    /**
     * One server.
     *
     * @param baseUrl {@code http://host:port} (or https, with a path prefix: {@link ServerUrl}).
     * @param threads event loops.
     * @param headers extra headers on every request.
     * @param timeoutNs longest an exchange may take.
     * @param transport Netty transport.
     */
    public LoadClient(final URI baseUrl, final int threads, final Map<String, String> headers, final long timeoutNs,
        final Transport transport)
    {
        this(List.of(baseUrl), threads, headers, timeoutNs, transport, false);
    }

    /**
     * @param baseUrls {@code http://host:port} or {@code https://...} of each server, a path prefix kept
     *     ({@link ServerUrl}); exchanges go to them in turn.
     * @param threads event loops.
     * @param headers extra headers on every request (API key, custom), in order.
     * @param timeoutNs longest an exchange may take before it fails as {@code timeout}.
     * @param transport Netty transport.
     * @param insecureTls accept any TLS certificate ({@code --insecure}).
     */
    public LoadClient(final List<URI> baseUrls, final int threads, final Map<String, String> headers,
        final long timeoutNs, final Transport transport, final boolean insecureTls)
    {
        this(baseUrls, null, threads, headers, timeoutNs, transport, insecureTls);
    }

    /**
     * A two-hop client: every exchange goes to the prefill server, then to the decode server with the prefill's
     * {@code kv_transfer_params} (exchanges built with a prefill body).
     *
     * @param prefillUrl {@code http://host:port} of the prefill server.
     * @param decodeUrl {@code http://host:port} of the decode server.
     * @param threads event loops.
     * @param headers extra headers on every request of both hops, in order.
     * @param timeoutNs longest each hop may take before the exchange fails as {@code timeout}.
     * @param transport Netty transport.
     * @param insecureTls accept any TLS certificate ({@code --insecure}).
     * @return the client.
     */
    public static LoadClient prefillDecode(final URI prefillUrl, final URI decodeUrl, final int threads,
        final Map<String, String> headers, final long timeoutNs, final Transport transport, final boolean insecureTls)
    {
        return new LoadClient(List.of(decodeUrl), prefillUrl, threads, headers, timeoutNs, transport, insecureTls);
    }

    private LoadClient(final List<URI> baseUrls, final URI prefillUrl, final int threads,
        final Map<String, String> headers, final long timeoutNs, final Transport transport, final boolean insecureTls)
    {
        if (baseUrls.isEmpty())
        {
            throw new IllegalArgumentException("give at least one --url");
        }
        group = new MultiThreadIoEventLoopGroup(threads, new LoopThreads("tapedeck-load"),
            transport.ioHandlerFactory());
        final Bootstrap template = new Bootstrap().group(group).channel(transport.socketChannel())
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
                (int)Math.min(30_000, TimeUnit.NANOSECONDS.toMillis(timeoutNs)));
        final Map<String, String> fixed = new LinkedHashMap<>(headers);
        final List<io.netty.channel.EventLoop> loops = new ArrayList<>();
        for (int i = 0; i < threads; i++)
        {
            loops.add(group.next());
        }
        // lanes interleaved so that consecutive exchanges go to the next server, each server's lanes on every loop
        for (int i = 0; i < threads * baseUrls.size(); i++)
        {
            lanes.add(lane(loops.get((i / baseUrls.size()) % threads), template, baseUrls.get(i % baseUrls.size()),
                null == prefillUrl ? "--url" : "--decode-url", fixed, timeoutNs, insecureTls));
        }
        if (null == prefillUrl)
        {
            entries = lanes;
            return;
        }
        entries = new ArrayList<>();
        for (int i = 0; i < threads; i++)
        {
            final Lane prefill = lane(loops.get(i), template, prefillUrl, "--prefill-url", fixed, timeoutNs,
                insecureTls);
            prefill.pairWith(lanes.get(i));
            entries.add(prefill);
        }
        lanes.addAll(entries);
    }

    private Lane lane(final io.netty.channel.EventLoop loop, final Bootstrap template, final URI baseUrl,
        final String flag, final Map<String, String> headers, final long timeoutNs, final boolean insecureTls)
    {
        try
        {
            final ServerUrl server = ServerUrl.parse(flag, baseUrl);
            return new Lane(loop, template, server, server.tls() ? Tls.nettyClient(insecureTls) : null, headers,
                timeoutNs, spares);
        }
        catch (final IllegalArgumentException e)
        {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e;
        }
    }

    /**
     * Send an exchange at its intended time, or at once when that has passed (any thread). Handing exchanges over a
     * few milliseconds early lets the event loop send them on time however late the calling thread gets to run.
     *
     * @param exchange the exchange.
     */
    public void submit(final Exchange exchange)
    {
        nextLane().submit(exchange);
    }

    /**
     * Keep a spare exchange for a closed loop (any thread): the next exchange marked
     * {@link Exchange#replaceWhenDone} that ends is replaced by it at once, on the event loop that ran it (so on the
     * same server), with no hop through the caller's thread.
     *
     * @param spare the spare (its intended time is set when it starts).
     * @return false when the client holds as many spares as it can (the spare was not taken).
     */
    public boolean addSpare(final Exchange spare)
    {
        return spares.offer(spare);
    }

    /**
     * @return spares held now (any thread; a moment's count).
     */
    public int spareCount()
    {
        return spares.size();
    }

    /**
     * Take a spare back to send it some other way (any thread).
     *
     * @return a spare no event loop took, or null.
     */
    public Exchange takeSpare()
    {
        return spares.poll();
    }

    /**
     * Drop every spare not used yet (any thread): exchanges that end afterwards are not replaced (until spares are
     * added again).
     *
     * @return spares dropped (never sent).
     */
    public int withdrawSpares()
    {
        int dropped = 0;
        Exchange spare;
        while (null != (spare = spares.poll()))
        {
            spare.release();
            dropped++;
        }
        return dropped;
    }

    private Lane nextLane()
    {
        return entries.get(Math.floorMod(next.getAndIncrement(), entries.size()));
    }

    /**
     * Open keep-alive connections ahead of a run, so connection set-up and first-use class loading do not delay
     * the first sends (any thread; waits up to {@code timeoutNs}).
     *
     * @param total connections wanted, spread over the lanes (to each server of a two-hop client).
     * @param timeoutNs how long to wait for them.
     * @return true when every attempt finished in time (failed connects are retried by the run itself).
     * @throws InterruptedException if interrupted while waiting.
     */
    public boolean preconnect(final int total, final long timeoutNs) throws InterruptedException
    {
        final int perLane = (total + entries.size() - 1) / entries.size();
        final CountDownLatch opened = new CountDownLatch(perLane * lanes.size());
        lanes.forEach(lane -> lane.preconnect(perLane, opened));
        return opened.await(timeoutNs, TimeUnit.NANOSECONDS);
    }

    /**
     * Close every connection; exchanges still running end as {@code incomplete}. The client stays usable: the next
     * run (the next point of a sweep) opens new connections.
     */
    public void abortAll()
    {
        lanes.forEach(lane -> lane.closeAll(true));
    }

    @Override
    public void close()
    {
        withdrawSpares();
        lanes.forEach(lane -> lane.closeAll(false));
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
