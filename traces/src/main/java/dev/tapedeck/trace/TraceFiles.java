package dev.tapedeck.trace;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * Opening trace and workload files: gzip by content (magic bytes) when reading, by a {@code .gz} name when writing.
 * Stateless; thread safe.
 */
public final class TraceFiles
{
    private static final int BUFFER_BYTES = 64 * 1024;

    private TraceFiles()
    {
    }

    /**
     * @param path a file, gzip or plain.
     * @return its decompressed content.
     * @throws IOException if it cannot be opened (the message names the file).
     */
    public static InputStream openInput(final Path path) throws IOException
    {
        try
        {
            return maybeGunzip(Files.newInputStream(path));
        }
        catch (final NoSuchFileException ex)
        {
            throw new NoSuchFileException(path.toString(), null, "no such file");
        }
        catch (final IOException ex)
        {
            throw new IOException(path + ": " + (null == ex.getMessage() ? ex.getClass().getSimpleName() :
                ex.getMessage()), ex);
        }
    }

    /**
     * @param line an unterminated last line.
     * @return true when it can be the start of a record still being written (a JSON object begun, text only); false
     *     for a tail of garbage (NUL or control bytes, anything not starting a JSON object), which is a problem.
     */
    static boolean couldBeCutRecord(final String line)
    {
        final String text = line.strip();
        if (!text.startsWith("{"))
        {
            return false;
        }
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            if ((c < 0x20 && '\t' != c) || '\ufffd' == c)
            {
                return false;
            }
        }
        return true;
    }

    /**
     * @param in content that may be gzip (multi-member streams are read whole).
     * @return the decompressed content.
     * @throws IOException if reading fails.
     */
    public static InputStream maybeGunzip(final InputStream in) throws IOException
    {
        final BufferedInputStream buffered = new BufferedInputStream(in, BUFFER_BYTES);
        buffered.mark(2);
        final int first = buffered.read();
        final int second = buffered.read();
        buffered.reset();
        if (0x1f == first && 0x8b == second)
        {
            return new TolerantGzipInputStream(new GZIPInputStream(buffered, BUFFER_BYTES));
        }
        return buffered;
    }

    /**
     * @param in a stream from {@link #openInput} or {@link #maybeGunzip}.
     * @return true when it was gzip and ended without its trailer.
     */
    public static boolean endedWithoutGzipTrailer(final InputStream in)
    {
        return in instanceof TolerantGzipInputStream && ((TolerantGzipInputStream)in).truncated;
    }

    /**
     * A gzip stream that ends cleanly where its data ends, also without the trailer: everything inflated so far is
     * delivered, and the missing trailer is remembered instead of thrown (a live capture has none yet).
     */
    private static final class TolerantGzipInputStream extends java.io.FilterInputStream
    {
        private boolean truncated;

        TolerantGzipInputStream(final InputStream in)
        {
            super(in);
        }

        @Override
        public int read() throws IOException
        {
            if (truncated)
            {
                return -1;
            }
            try
            {
                return super.read();
            }
            catch (final java.io.EOFException ex)
            {
                truncated = true;
                return -1;
            }
        }

        @Override
        public int read(final byte[] buffer, final int offset, final int length) throws IOException
        {
            if (truncated)
            {
                return -1;
            }
            try
            {
                return super.read(buffer, offset, length);
            }
            catch (final java.io.EOFException ex)
            {
                truncated = true;
                return -1;
            }
        }

        @Override
        public int available() throws IOException
        {
            return truncated ? 0 : super.available();
        }
    }

    /**
     * @param path the file to create or replace; gzip when its name ends with {@code .gz}.
     * @return a stream whose {@code flush()} makes everything written so far readable (gzip sync flush).
     * @throws IOException if the file cannot be created.
     */
    public static OutputStream openOutput(final Path path) throws IOException
    {
        final Path parent = path.toAbsolutePath().getParent();
        if (null != parent)
        {
            Files.createDirectories(parent);
        }
        final OutputStream out = Files.newOutputStream(path);
        if (isGzipName(path))
        {
            return new GZIPOutputStream(out, BUFFER_BYTES, true);
        }
        return new java.io.BufferedOutputStream(out, BUFFER_BYTES);
    }

    /**
     * @param path a file name.
     * @return true when it ends with {@code .gz}.
     */
    public static boolean isGzipName(final Path path)
    {
        return path.getFileName().toString().endsWith(".gz");
    }
}
