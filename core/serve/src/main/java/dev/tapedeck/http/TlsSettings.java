package dev.tapedeck.http;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * HTTPS for {@code serve}, as llm-d-inference-sim offers it: a PEM certificate chain and PKCS#8 key
 * ({@code --ssl-certfile}, {@code --ssl-keyfile}, vLLM's names too), or a certificate made at start
 * ({@code --self-signed-certs}). Immutable.
 *
 * @param certFile the PEM certificate chain, or null.
 * @param keyFile the PEM private key, or null.
 * @param selfSigned make a self-signed certificate for {@code localhost} at start.
 */
public record TlsSettings(Path certFile, Path keyFile, boolean selfSigned)
{
    /** Plain HTTP. */
    public static final TlsSettings NONE = new TlsSettings(null, null, false);

    /**
     * Validates: certificate and key go together, and exclude a self-signed certificate.
     */
    public TlsSettings
    {
        if ((null == certFile) != (null == keyFile))
        {
            throw new IllegalArgumentException("--ssl-certfile and --ssl-keyfile go together");
        }
        if (selfSigned && null != certFile)
        {
            throw new IllegalArgumentException("give --self-signed-certs or --ssl-certfile with --ssl-keyfile, " +
                "not both");
        }
    }

    /**
     * @return true if the server speaks HTTPS.
     */
    public boolean enabled()
    {
        return selfSigned || null != certFile;
    }

    /**
     * @return the server's TLS context, or null for plain HTTP.
     * @throws IllegalArgumentException naming the files when they cannot be used.
     */
    SslContext serverContext()
    {
        if (!enabled())
        {
            return null;
        }
        try
        {
            if (selfSigned)
            {
                final KeyPair keys = KeyPairGenerator.getInstance("EC").generateKeyPair();
                return SslContextBuilder.forServer(keys.getPrivate(), selfSigned(keys)).build();
            }
            return SslContextBuilder.forServer(certFile.toFile(), keyFile.toFile()).build();
        }
        catch (final GeneralSecurityException | OperatorCreationException | IOException | RuntimeException ex)
        {
            throw new IllegalArgumentException(selfSigned ? "--self-signed-certs: " + ex.getMessage() :
                "--ssl-certfile " + certFile + " / --ssl-keyfile " + keyFile + ": " + ex.getMessage() +
                " (a PEM certificate chain and a PEM PKCS#8 key)", ex);
        }
    }

    /** A certificate for localhost and 127.0.0.1, valid for a year, signed by its own key (Bouncy Castle's builder). */
    private static X509Certificate selfSigned(final KeyPair keys)
        throws IOException, OperatorCreationException, GeneralSecurityException
    {
        final X500Name name = new X500Name("CN=localhost");
        final Instant now = Instant.now();
        final X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name,
            BigInteger.valueOf(now.toEpochMilli()), Date.from(now.minus(Duration.ofDays(1))),
            Date.from(now.plus(Duration.ofDays(365))), name, keys.getPublic());
        builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
            new GeneralName(GeneralName.dNSName, "localhost"), new GeneralName(GeneralName.iPAddress, "127.0.0.1")}));
        return new JcaX509CertificateConverter().getCertificate(builder.build(
            new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
    }
}
