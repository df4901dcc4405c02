package dev.tapedeck.net;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.junit.jupiter.api.Test;
import org.zeromq.ZContext;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A context's recoverable I/O-thread errors become one log line (a warning in use, a debug line while closing)
 * instead of JeroMQ's stack trace on standard error.
 */
class ZmqContextsTest
{
    @Test
    void shouldLogAnIoThreadErrorAsOneLineAndQuietlyWhileClosing()
    {
        final Logger logger = Logger.getLogger(ZmqContexts.class.getName());
        final List<LogRecord> records = new ArrayList<>();
        final Handler capture = new Handler()
        {
            @Override
            public void publish(final LogRecord record)
            {
                records.add(record);
            }

            @Override
            public void flush()
            {
            }

            @Override
            public void close()
            {
            }
        };
        final Level levelBefore = logger.getLevel();
        logger.setLevel(Level.ALL);
        logger.addHandler(capture);
        final PrintStream errBefore = System.err;
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final AtomicBoolean closing = new AtomicBoolean();
        final ZContext context = ZmqContexts.create(1, "play", closing::get);
        try
        {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            final RuntimeException error = new IllegalStateException(new ClosedChannelException());
            context.getNotificationExceptionHandler().uncaughtException(Thread.currentThread(), error);
            closing.set(true);
            context.getNotificationExceptionHandler().uncaughtException(Thread.currentThread(), error);

            assertEquals(2, records.size());
            assertEquals(Level.WARNING, records.get(0).getLevel());
            assertTrue(records.get(0).getMessage().startsWith("play: a ZeroMQ I/O thread reported "),
                records.get(0).getMessage());
            assertEquals(null, records.get(0).getThrown(), "one line in use: no stack trace");
            assertEquals(Level.FINE, records.get(1).getLevel());
            assertTrue(records.get(1).getMessage().endsWith(" while closing"), records.get(1).getMessage());
            assertTrue(!err.toString().contains("\tat ") && !err.toString().contains("while closing"),
                "no stack trace and no debug line on standard error: " + err);
        }
        finally
        {
            System.setErr(errBefore);
            logger.removeHandler(capture);
            logger.setLevel(levelBefore);
            context.close();
        }
    }
}
