package dev.tapedeck.net;

import java.util.Set;
import java.util.TreeSet;

import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocalThread;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoopThreadsTest
{
    @Test
    void loopsRunOnNamedFastThreadLocalThreads() throws Exception
    {
        final MultiThreadIoEventLoopGroup group =
            new MultiThreadIoEventLoopGroup(3, new LoopThreads("tapedeck-test"), NioIoHandler.newFactory());
        try
        {
            final Set<String> names = new TreeSet<>();
            for (final EventExecutor loop : group)
            {
                final Thread thread = loop.submit(Thread::currentThread).get();
                assertTrue(thread instanceof FastThreadLocalThread, thread.getClass().getName());
                names.add(thread.getName());
            }
            assertEquals(Set.of("tapedeck-test-0", "tapedeck-test-1", "tapedeck-test-2"), names);
        }
        finally
        {
            group.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.MILLISECONDS).sync();
        }
    }
}
