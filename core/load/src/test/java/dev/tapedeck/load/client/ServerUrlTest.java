package dev.tapedeck.load.client;

import java.net.URI;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ServerUrlTest
{
    @Test
    void shouldKeepAPathPrefixAndDropAnSdkStyleV1()
    {
        assertEquals(new ServerUrl(false, "127.0.0.1", 8000, ""), ServerUrl.parse("--url",
            URI.create("http://127.0.0.1:8000")));
        assertEquals(new ServerUrl(false, "127.0.0.1", 8000, ""), ServerUrl.parse("--url",
            URI.create("http://127.0.0.1:8000/v1/")));
        final ServerUrl gateway = ServerUrl.parse("--url", URI.create("https://gw.example.com/team-a/v1"));
        assertEquals(new ServerUrl(true, "gw.example.com", 443, "/team-a"), gateway);
        assertEquals("gw.example.com", gateway.hostHeader(), "the default port is left out of Host");
        assertEquals(URI.create("https://gw.example.com:443/team-a/v1/models"), gateway.resolve("/v1/models"));
        assertEquals("h:8443", ServerUrl.parse("--url", URI.create("https://h:8443/x")).hostHeader());
        assertEquals(80, ServerUrl.parse("--url", URI.create("http://h")).port());
    }

    @Test
    void shouldRefuseWhatIsNotAnHttpOrHttpsUrlNamingTheFlag()
    {
        for (final String bad : new String[] {"ftp://h:1", "localhost:8000", "http:///nohost", "http://h:1/?q=1"})
        {
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> ServerUrl.parse("--decode-url", URI.create(bad)));
            assertTrue(ex.getMessage().startsWith("--decode-url ") && ex.getMessage().contains(bad), ex.getMessage());
        }
    }
}
