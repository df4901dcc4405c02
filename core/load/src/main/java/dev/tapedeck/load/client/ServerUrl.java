package dev.tapedeck.load.client;

import java.net.URI;
import java.util.Locale;

/**
 * A server the load client talks to, from a {@code --url}: {@code http} or {@code https}, host, port (80 or 443 when
 * not given) and a path prefix kept in front of every request path, as a gateway that routes by path needs
 * ({@code https://gw.example.com/team-a} sends {@code /team-a/v1/completions}). A prefix that ends in {@code /v1}, as
 * an OpenAI SDK's base URL does, loses it, so {@code http://host:8000/v1} and {@code http://host:8000} are the same
 * server. Immutable.
 *
 * @param tls true for {@code https}.
 * @param host the host.
 * @param port the port.
 * @param pathPrefix the path prefix, {@code ""} or starting with {@code /} and not ending with one.
 */
public record ServerUrl(boolean tls, String host, int port, String pathPrefix)
{
    /**
     * @param flag the flag, for the message.
     * @param url the URL as given.
     * @return the server.
     * @throws IllegalArgumentException naming the flag when the URL is not an http or https URL with a host.
     */
    public static ServerUrl parse(final String flag, final URI url)
    {
        final String scheme = null == url.getScheme() ? "" : url.getScheme().toLowerCase(Locale.ROOT);
        if (!("http".equals(scheme) || "https".equals(scheme)) || null == url.getHost())
        {
            throw new IllegalArgumentException(flag + " must be an http:// or https:// URL such as " +
                "http://127.0.0.1:8000 (a path prefix is kept), got '" + url + "'");
        }
        if (null != url.getRawQuery() || null != url.getRawFragment())
        {
            throw new IllegalArgumentException(flag + " takes no query or fragment, got '" + url + "'");
        }
        final boolean tls = "https".equals(scheme);
        String prefix = null == url.getRawPath() ? "" : url.getRawPath();
        while (prefix.endsWith("/"))
        {
            prefix = prefix.substring(0, prefix.length() - 1);
        }
        if (prefix.endsWith("/v1"))
        {
            prefix = prefix.substring(0, prefix.length() - 3);
        }
        return new ServerUrl(tls, url.getHost(), -1 == url.getPort() ? (tls ? 443 : 80) : url.getPort(), prefix);
    }

    /**
     * @return the {@code Host} header: the host, with the port when it is not the scheme's default.
     */
    public String hostHeader()
    {
        return host + (port == (tls ? 443 : 80) ? "" : ":" + port);
    }

    /**
     * @param path a request path, e.g. {@code /v1/models}.
     * @return the full URL of that path on this server.
     */
    public URI resolve(final String path)
    {
        return URI.create((tls ? "https://" : "http://") + host + ":" + port + pathPrefix + path);
    }
}
