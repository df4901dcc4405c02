package dev.tapedeck.cli;

import java.lang.management.ManagementFactory;

import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.VMOption;

/**
 * Gives the start-up garbage back to the operating system once a long-running command is up. Building the tokenizer
 * tables and a hundred engines allocates several times what stays live, and the JVM grows its heap while doing so;
 * without a collection it keeps that memory resident for the whole run. One full collection (tens of milliseconds,
 * before the command says it is ready), with the heap allowed to shrink to 2.5 times what is live (free ratios 20 and
 * 60 percent), returns it: {@code serve --instances 100} stays under 300 MB resident
 * ({@code bench/scripts/instances-rss.sh}). Not tighter: at 5/20 percent a served heap was 80 MB for 55 MB live, above
 * G1's concurrent-start threshold (45% occupancy), and serving 1,000 streams set off a marking cycle every few seconds
 * with remark pauses up to 10 ms; at 20/60 the same run had no collection at all.
 * <p>
 * The heap free ratios are changed only where the user left the JVM's defaults ({@code -XX:MinHeapFreeRatio},
 * {@code -XX:MaxHeapFreeRatio} on the command line win), and only on a JVM that lets them change while running;
 * {@code -XX:+DisableExplicitGC} turns the collection off. Called from the main thread.
 */
final class StartupHeap
{
    private static final String MIN_FREE = "MinHeapFreeRatio";
    private static final String MAX_FREE = "MaxHeapFreeRatio";

    private StartupHeap()
    {
    }

    /**
     * Let the heap shrink close to what is live, and collect once.
     */
    static void release()
    {
        try
        {
            final HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            if (isDefault(vm, MIN_FREE) && isDefault(vm, MAX_FREE))
            {
                vm.setVMOption(MIN_FREE, "20");
                vm.setVMOption(MAX_FREE, "60");
            }
        }
        catch (final RuntimeException | LinkageError notHotSpot)
        {
            // another VM, or flags it will not change while running: its own heap policy stays
        }
        System.gc();
    }

    private static boolean isDefault(final HotSpotDiagnosticMXBean vm, final String name)
    {
        final VMOption option = vm.getVMOption(name);
        return option.isWriteable() && VMOption.Origin.DEFAULT == option.getOrigin();
    }
}
