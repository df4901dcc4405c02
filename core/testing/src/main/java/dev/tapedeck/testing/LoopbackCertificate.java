package dev.tapedeck.testing;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.concurrent.TimeUnit;

/**
 * A certificate for {@code localhost} and {@code 127.0.0.1} made by the JDK's own {@code keytool} (EC P-256, two
 * days), for tests of TLS on loopback: its PKCS12 key store, certificate and private key. Immutable.
 *
 * @param keyStore the PKCS12 store holding the key and certificate under {@link #ALIAS}, password {@link #PASSWORD}.
 * @param certificate the certificate.
 * @param privateKey its private key.
 */
public record LoopbackCertificate(KeyStore keyStore, X509Certificate certificate, PrivateKey privateKey)
{
    /** The key's alias in the store. */
    public static final String ALIAS = "loopback";
    /** The store's and the key's password. */
    public static final String PASSWORD = "secret";

    /**
     * @param dir where the key store file is written.
     * @return a new certificate.
     * @throws IOException if keytool cannot run or fails.
     * @throws InterruptedException if interrupted while it runs.
     * @throws GeneralSecurityException if the store cannot be read.
     */
    public static LoopbackCertificate make(final Path dir)
        throws IOException, InterruptedException, GeneralSecurityException
    {
        final Path file = dir.resolve("loopback.p12");
        final Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool")
            .toString(), "-genkeypair", "-alias", ALIAS, "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
            "CN=localhost", "-ext", "SAN=ip:127.0.0.1", "-validity", "2", "-storetype", "PKCS12", "-keystore",
            file.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD).redirectErrorStream(true).start();
        final String output = new String(keytool.getInputStream().readAllBytes());
        if (!keytool.waitFor(60, TimeUnit.SECONDS) || 0 != keytool.exitValue())
        {
            throw new IOException("keytool failed: " + output);
        }
        final KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(file.toFile()))
        {
            store.load(in, PASSWORD.toCharArray());
        }
        return new LoopbackCertificate(store, (X509Certificate)store.getCertificate(ALIAS),
            (PrivateKey)store.getKey(ALIAS, PASSWORD.toCharArray()));
    }
}
