package dev.tapedeck.cli;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin",
            "java").toString()));
        command.addAll(jvmFlags);
        command.addAll(List.of("--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp",
            System.getProperty("java.class.path") + File.pathSeparator, NettyDefaultsTest.class.getName()));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, process.exitValue(), out);
        final String[] lines = out.split("\n");
        return lines[lines.length - 1].trim();
    }
}
