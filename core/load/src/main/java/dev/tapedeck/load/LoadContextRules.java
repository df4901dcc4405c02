package dev.tapedeck.load;

import java.net.URI;
import java.util.List;
import java.util.Locale;

import dev.tapedeck.load.client.ServerUrl;

/**
 * The rules a {@link LoadContext} must satisfy to describe a run that ends, each broken rule named in the words of
 * the CLI flags: the target ({@code --url}, or {@code --prefill-url} with {@code --decode-url}), the source of
 * requests, the run's end, and the URLs' forms. Stateless; called by {@link LoadContext#conclude()} on the thread
 * filling the context.
 */
final class LoadContextRules
{
    private LoadContextRules()
    {
    }

    /**
     * @param c the settings.
     * @throws IllegalArgumentException naming the first problem.
     */
    static void check(final LoadContext c)
    {
        checkTarget(c);
        if (null != c.tokenizer() && null != c.tokenizerFile())
        {
            throw new IllegalArgumentException("give a tokenizer or a tokenizer file, not both");
        }
        final int sources = (null != c.workload() ? 1 : 0) + (null != c.rate() ? 1 : 0);
        if (null == c.workload() && null == c.rate() && null == c.concurrency() && null == c.sweep())
        {
            throw new IllegalArgumentException("give --workload FILE, --rate R, --concurrency C or --sweep");
        }
        if (sources > 1)
        {
            throw new IllegalArgumentException("--workload and --rate cannot be combined");
        }
        final String sweep = c.sweep();
        if (null != sweep && (null != c.rate() || null != c.concurrency()))
        {
            throw new IllegalArgumentException("--sweep replaces --rate and --concurrency");
        }
        if (null != sweep && !sweep.matches("(?i)(concurrency|rate|users)=[0-9.]+(,[0-9.]+)*"))
        {
            throw new IllegalArgumentException("--sweep must be concurrency=N,N,..., rate=R,R,... or users=N,N,..., " +
                "got '" + sweep + "'");
        }
        if (null != sweep)
        {
            checkSweepLevels(sweep);
        }
        final boolean usersSweep = null != sweep && sweep.toLowerCase(Locale.ROOT).startsWith("users");
        c.replay().checkAgainstSweep(usersSweep ? "users" : null);
        if ((c.replay().users() > 0 || usersSweep) && null == c.workload())
        {
            throw new IllegalArgumentException("--users and --sweep users=... replay a --workload's sessions");
        }
        if (c.replay().fixedSchedule() && null == c.workload())
        {
            throw new IllegalArgumentException("--fixed-schedule and its offsets replay a --workload's time stamps");
        }
        if (!c.sweepServers().isEmpty() && c.isPrefillDecode())
        {
            throw new IllegalArgumentException("--sweep-servers and a prefill/decode pair do not go together");
        }
        c.sweepServers().forEach((name, url) -> ServerUrl.parse("--sweep-servers " + name, url));
        if (c.gpusPerServer() < 1)
        {
            throw new IllegalArgumentException("--gpus-per-server must be >= 1, got " + c.gpusPerServer());
        }
        final boolean closed = c.isClosedLoop();
        final boolean generated = null == c.workload();
        final boolean bounded = null != c.durationNs() || 0 != c.maxRequests() || c.maxSeconds() > 0;
        if ((closed || (null != sweep && !usersSweep) || null != c.rate()) && !bounded)
        {
            throw new IllegalArgumentException("give --duration or --max-requests, or the run never ends");
        }
        if ((null != c.rate() || (null != sweep && sweep.startsWith("rate"))) && null == c.durationNs() &&
            !(c.maxSeconds() > 0))
        {
            throw new IllegalArgumentException("--rate needs --duration");
        }
        if (null != c.concurrency() && c.concurrency() < 1)
        {
            throw new IllegalArgumentException("--concurrency must be >= 1");
        }
        if (c.clientThreads() < 1 || c.clientThreads() > 64)
        {
            throw new IllegalArgumentException("--client-threads must be within 1..64");
        }
        for (final URI scrape : c.scrapeMetrics())
        {
            if (!("http".equals(scrape.getScheme()) || "https".equals(scrape.getScheme())) || null == scrape.getHost())
            {
                throw new IllegalArgumentException("--scrape-metrics must be an http:// or https:// URL such as " +
                    "http://127.0.0.1:8000/metrics, got '" + scrape + "'");
            }
        }
        if (!generated && null == c.durationNs() && 0 == c.maxRequests() && closed)
        {
            throw new IllegalArgumentException("give --duration or --max-requests with --concurrency");
        }
    }

    /**
     * {@code --url}, or {@code --prefill-url} and {@code --decode-url} together; never both kinds.
     */
    private static void checkTarget(final LoadContext c)
    {
        final boolean urls = null != c.urls() && !c.urls().isEmpty();
        final boolean prefill = null != c.prefillUrl();
        final boolean decode = null != c.decodeUrl();
        if (prefill != decode)
        {
            throw new IllegalArgumentException("--prefill-url and --decode-url go together: give both or neither");
        }
        if (urls && prefill)
        {
            throw new IllegalArgumentException("give --url or --prefill-url with --decode-url, not both");
        }
        if (!urls && !prefill)
        {
            throw new IllegalArgumentException("give --url");
        }
        if (prefill)
        {
            ServerUrl.parse("--prefill-url", c.prefillUrl());
            ServerUrl.parse("--decode-url", c.decodeUrl());
        }
        for (final URI url : urls ? c.urls() : List.<URI>of())
        {
            ServerUrl.parse("--url", url);
        }
    }

    private static void checkSweepLevels(final String sweep)
    {
        final boolean concurrencySweep = !sweep.toLowerCase(Locale.ROOT).startsWith("rate"); // or users
        for (final String level : sweep.split("=", 2)[1].split(","))
        {
            final double value;
            try
            {
                value = Double.parseDouble(level);
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("--sweep level '" + level + "' is not a number");
            }
            if (concurrencySweep ? value < 1 || value != Math.rint(value) : !(value > 0))
            {
                throw new IllegalArgumentException("--sweep levels must be " + (concurrencySweep ?
                    "whole numbers >= 1" : "rates > 0") + ", got '" + level + "'");
            }
        }
    }
}
