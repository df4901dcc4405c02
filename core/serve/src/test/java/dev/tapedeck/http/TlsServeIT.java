package dev.tapedeck.http;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.Base64;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.testing.LoopbackCertificate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve} over HTTPS on real sockets: with a PEM certificate and key made by the JDK's keytool (the client
 * trusts exactly that certificate, host name checked), and with a self-signed certificate made at start (refused by
 * a client that trusts only the JDK's authorities).
 */
@Timeout(120)
class TlsServeIT
{
    private static final String BODY = "{\"model\":\"" + TestServer.MODEL + "\",\"prompt\":\"hi\",\"max_tokens\":3," +
        "\"stream\":true}";

    @TempDir
    Path dir;

    private static HttpResponse<String> post(final HttpClient client, final int port) throws Exception
    {
        return client.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/v1/completions"))
            .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(BODY)).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldServeHttpsWithAPemCertificateAndKey() throws Exception
    {
        final LoopbackCertificate made = LoopbackCertificate.make(dir);
        final X509Certificate certificate = made.certificate();
        final Path certFile = dir.resolve("cert.pem");
        final Path keyFile = dir.resolve("key.pem");
        Files.writeString(certFile, pem("CERTIFICATE", certificate.getEncoded()), StandardCharsets.US_ASCII);
        Files.writeString(keyFile, pem("PRIVATE KEY", made.privateKey().getEncoded()), StandardCharsets.US_ASCII);

        final KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        trusted.setCertificateEntry("s", certificate);
        final TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        final SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, trust.getTrustManagers(), null);
        final HttpClient client = HttpClient.newBuilder().sslContext(ssl).build();
        try (TestServer server = new TestServer(TestServer.context().tls(new TlsSettings(certFile, keyFile, false))))
        {
            final HttpResponse<String> answer = post(client, server.ports.get(0));
            assertEquals(200, answer.statusCode(), answer.body());
            assertTrue(answer.body().endsWith("data: [DONE]\n\n"), "a stream over TLS: " + answer.body());
            assertEquals("https", server.serve.baseUrls().get(0).getScheme());
        }
    }

    @Test
    void shouldServeHttpsWithASelfSignedCertificateThatAStrictClientRefuses() throws Exception
    {
        try (TestServer server = new TestServer(TestServer.context().tls(new TlsSettings(null, null, true))))
        {
            assertThrows(SSLHandshakeException.class, () -> post(HttpClient.newHttpClient(), server.ports.get(0)),
                "not signed by an authority the JDK trusts");
        }
    }

    @Test
    void shouldRefuseHalfATlsConfiguration()
    {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new TlsSettings(dir.resolve("c"), null,
            false)).getMessage().contains("go together"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new TlsSettings(dir.resolve("c"),
            dir.resolve("k"), true)).getMessage().contains("not both"));
        final IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
            () -> new TestServer(TestServer.context().tls(new TlsSettings(dir.resolve("no-cert.pem"),
            dir.resolve("no-key.pem"), false))));
        assertTrue(missing.getMessage().startsWith("--ssl-certfile "), missing.getMessage());
    }

    private static String pem(final String type, final byte[] der)
    {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
            .encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}
