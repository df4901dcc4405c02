package dev.tapedeck.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A minimal HTTP/1.1 client on a plain socket, for what the JDK client hides: chunked-transfer framing, partial
 * reads, disconnecting mid-stream.
 */
final class RawHttp implements AutoCloseable
{
    final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RawHttp(final int port) throws IOException
    {
        this(port, 0);
    }

    /**
     * @param receiveBufferBytes SO_RCVBUF set before connecting (so the TCP window is negotiated for it), 0 = default.
     */
    RawHttp(final int port, final int receiveBufferBytes) throws IOException
    {
        socket = new Socket();
        if (receiveBufferBytes > 0)
        {
            socket.setReceiveBufferSize(receiveBufferBytes);
        }
        socket.connect(new java.net.InetSocketAddress("127.0.0.1", port), 5000);
        socket.setSoTimeout(20_000);
        in = new java.io.BufferedInputStream(socket.getInputStream(), 64 * 1024);
        out = socket.getOutputStream();
    }

    void post(final String path, final String json) throws IOException
    {
        final byte[] body = json.getBytes(StandardCharsets.UTF_8);
        final String head = "POST " + path + " HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
            "content-length: " + body.length + "\r\n\r\n";
        out.write(head.getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
    }

    /**
     * @return the status line and headers, up to and excluding the blank line.
     */
    String readHead() throws IOException
    {
        final ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        final byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < 4)
        {
            final int b = in.read();
            if (b < 0)
            {
                throw new IOException("connection closed in the head");
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        final String text = head.toString(StandardCharsets.US_ASCII);
        return text.substring(0, text.length() - 4);
    }

    /**
     * Read one chunk of a chunked body, checking its framing.
     *
     * @return the chunk's payload; empty for the last chunk.
     */
    byte[] readChunk() throws IOException
    {
        final String sizeLine = readLine();
        if (!sizeLine.matches("[0-9a-f]+"))
        {
            throw new IOException("bad chunk size line: '" + sizeLine + "'");
        }
        final int size = Integer.parseInt(sizeLine, 16);
        final byte[] payload = in.readNBytes(size);
        if (payload.length != size)
        {
            throw new IOException("chunk shorter than announced");
        }
        if (!readLine().isEmpty())
        {
            throw new IOException("chunk not followed by CRLF");
        }
        return payload;
    }

    private String readLine() throws IOException
    {
        final ByteArrayOutputStream line = new ByteArrayOutputStream();
        int previous = -1;
        while (true)
        {
            final int b = in.read();
            if (b < 0)
            {
                throw new IOException("connection closed in a line");
            }
            if (previous == '\r' && b == '\n')
            {
                final byte[] bytes = line.toByteArray();
                return new String(bytes, 0, bytes.length - 1, StandardCharsets.US_ASCII);
            }
            line.write(b);
            previous = b;
        }
    }

    @Override
    public void close() throws IOException
    {
        socket.close();
    }
}
