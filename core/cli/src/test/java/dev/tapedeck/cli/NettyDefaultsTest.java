package dev.tapedeck.cli;

import java.util.List;

import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The CLI's Netty defaults, in child JVMs (the level is read once per JVM): the leak detector is off unless the user
 * named a level, and Netty's allocator, first used after the defaults are set, sees that.
 */
class NettyDefaultsTest
{
    /**
     * The child JVM: the CLI's defaults, then a Netty allocation, then the level Netty uses.
     *
     * @param args none.
     */
    public static void main(final String[] args)
    {
        Main.nettyDefaults();
        ByteBufAllocator.DEFAULT.buffer(16).release();
        System.out.println(ResourceLeakDetector.getLevel());
    }

    @Test
    void shouldTurnTheLeakDetectorOffForTheCli() throws Exception
    {
        assertEquals("DISABLED", child(List.of()));
    }

    @Test
    void shouldKeepALevelTheUserGave() throws Exception
    {
        assertEquals("PARANOID", child(List.of("-D" + Main.LEAK_DETECTION_LEVEL + "=paranoid")));
    }

    private static String child(final List<String> jvmFlags) throws Exception
    {
        final String[] lines = ChildMain.output(NettyDefaultsTest.class, jvmFlags).split("\n");
        return lines[lines.length - 1].trim();
    }
}
