package dev.tapedeck.cli;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs a test class's own {@code main} in a child JVM, with JVM flags and this JVM's class path, for what a JVM
 * settles once (heap policy, Netty's leak detector level). Called from a test thread.
 */
final class ChildMain
{
    private ChildMain()
    {
    }

    /**
     * @param main the class whose {@code main} runs.
     * @param jvmFlags flags for the child JVM.
     * @return what the child printed (standard output and error), trimmed.
     * @throws Exception when the child cannot start; an assertion fails when it does not exit 0 within 60 s.
     */
    static String output(final Class<?> main, final List<String> jvmFlags) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin",
            "java").toString()));
        command.addAll(jvmFlags);
        command.addAll(List.of("--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp",
            System.getProperty("java.class.path") + File.pathSeparator, main.getName()));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, process.exitValue(), out);
        return out;
    }
}
