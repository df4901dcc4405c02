package dev.tapedeck.build;

/**
 * The one JVM option tapedeck needs: Agrona (the engine's rings and queues, the load client's queues) reaches
 * {@code jdk.internal.misc.Unsafe}, so {@code java.base/jdk.internal.misc} must be opened to the unnamed module. The
 * {@code tapedeck} launcher and {@code tapedeck.jar}'s manifest do it; code that embeds tapedeck (a JUnit or JMH
 * suite) must pass {@value #OPTION} itself. Stateless; any thread.
 */
public final class JvmAccess
{
    /** The option, as it goes on a {@code java} command line or in surefire's {@code argLine}. */
    public static final String OPTION = "--add-opens java.base/jdk.internal.misc=ALL-UNNAMED";

    private JvmAccess()
    {
    }

    /**
     * Fail at once, with the fix in the message, rather than later in the middle of a run.
     *
     * @throws IllegalStateException when the JVM was started without {@value #OPTION}.
     */
    public static void requireAgronaAccess()
    {
        if (!Object.class.getModule().isOpen("jdk.internal.misc", JvmAccess.class.getModule()))
        {
            throw new IllegalStateException("tapedeck needs the JVM option '" + OPTION + "' (Agrona's access to " +
                "jdk.internal.misc.Unsafe): add it to the java command line, or to the test JVM (Maven surefire: " +
                "<argLine>" + OPTION + "</argLine>)");
        }
    }
}
