package dev.tapedeck.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty reports a leaked buffer. Tests run with {@code -Dio.netty.leakDetection.level=
 * paranoid}, so every buffer is tracked; after the class, garbage is collected and fresh allocations give Netty the
 * chance to report, and any {@code LEAK:} report fails the class.
 */
public final class NoNettyLeaks implements BeforeAllCallback, AfterAllCallback
{
    private static final Logger DETECTOR_LOG = Logger.getLogger(ResourceLeakDetector.class.getName());
    private final List<String> reports = new ArrayList<>();
    private final Handler capture = new Handler()
    {
        @Override
        public void publish(final LogRecord record)
        {
            final String message = String.valueOf(record.getMessage());
            if (message.contains("LEAK"))
            {
                synchronized (reports)
                {
                    reports.add(message);
                }
            }
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

    @Override
    public void beforeAll(final ExtensionContext context)
    {
        if (ResourceLeakDetector.getLevel() != ResourceLeakDetector.Level.PARANOID)
        {
            throw new IllegalStateException("tests must run with -Dio.netty.leakDetection.level=paranoid");
        }
        DETECTOR_LOG.setLevel(Level.ALL);
        DETECTOR_LOG.addHandler(capture);
    }

    @Override
    public void afterAll(final ExtensionContext context) throws InterruptedException
    {
        for (int round = 0; round < 3; round++)
        {
            System.gc();
            Thread.sleep(50);
            for (int i = 0; i < 200; i++)
            {
                final ByteBuf probe = PooledByteBufAllocator.DEFAULT.directBuffer(64);
                probe.release();
            }
        }
        DETECTOR_LOG.removeHandler(capture);
        synchronized (reports)
        {
            if (!reports.isEmpty())
            {
                throw new AssertionError("Netty reported " + reports.size() + " leak(s):\n" + reports.get(0));
            }
        }
    }
}
