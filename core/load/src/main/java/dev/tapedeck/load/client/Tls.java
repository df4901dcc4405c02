package dev.tapedeck.load.client;

import java.net.http.HttpClient;
import java.security.GeneralSecurityException;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;

/**
 * TLS for the load generator's clients ({@code https} targets): the JDK's trusted certificates and host name check,
 * or, with {@code --insecure}, any certificate (a gateway with a self-signed certificate in a test setup). The one
 * place both the Netty client and the JDK HTTP client (model discovery, metrics scrapes) get their TLS settings.
 */
public final class Tls
{
    private Tls()
    {
    }

    /**
     * @param insecure accept any certificate.
     * @return a client context for Netty's {@code SslHandler}.
     * @throws IllegalStateException if the JDK cannot make one.
     */
    public static SslContext nettyClient(final boolean insecure)
    {
        try
        {
            final SslContextBuilder builder = SslContextBuilder.forClient();
            if (insecure)
            {
                builder.trustManager(InsecureTrustManagerFactory.INSTANCE).endpointIdentificationAlgorithm(null);
            }
            return builder.build();
        }
        catch (final SSLException ex)
        {
            throw new IllegalStateException("cannot set up TLS: " + ex.getMessage(), ex);
        }
    }

    /**
     * @param insecure accept any certificate (and any host name, through the JDK's
     *     {@code jdk.internal.httpclient.disableHostnameVerification}, set for the process).
     * @return a JDK HTTP client builder with those TLS settings.
     */
    public static HttpClient.Builder javaClient(final boolean insecure)
    {
        final HttpClient.Builder builder = HttpClient.newBuilder();
        if (!insecure)
        {
            return builder;
        }
        System.setProperty("jdk.internal.httpclient.disableHostnameVerification", "true");
        try
        {
            final SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, InsecureTrustManagerFactory.INSTANCE.getTrustManagers(), null);
            return builder.sslContext(context);
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("cannot set up TLS: " + ex.getMessage(), ex);
        }
    }
}
