package dev.tapedeck.build;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The check runs in a child JVM started without the option, so the failure and its message are real.
 */
class JvmAccessTest
{
    /** The child's main: exit 0 when the check passes, else print its message and exit 3. */
    public static final class Probe
    {
        private Probe()
        {
        }

        /**
         * @param args unused.
         */
        public static void main(final String[] args)
        {
            try
            {
                JvmAccess.requireAgronaAccess();
            }
            catch (final IllegalStateException ex)
            {
                System.out.print(ex.getMessage());
                System.exit(3);
            }
        }
    }

    @Test
    void shouldPassInThisJvmWhichHasTheOption()
    {
        assertDoesNotThrow(JvmAccess::requireAgronaAccess);
    }

    @Test
    void shouldNameTheOptionInAJvmWithoutIt() throws IOException, InterruptedException
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process child = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"),
            Probe.class.getName())).redirectErrorStream(true).start();
        final String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(30, TimeUnit.SECONDS));
        assertEquals(3, child.exitValue(), out);
        assertTrue(out.startsWith("tapedeck needs the JVM option '--add-opens java.base/jdk.internal.misc=" +
            "ALL-UNNAMED'"), out);
        assertTrue(out.contains("<argLine>--add-opens java.base/jdk.internal.misc=ALL-UNNAMED</argLine>"), out);
    }
}
