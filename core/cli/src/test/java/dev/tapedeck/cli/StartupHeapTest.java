package dev.tapedeck.cli;

import java.lang.management.ManagementFactory;
import java.util.List;

import com.sun.management.HotSpotDiagnosticMXBean;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The start-up heap release: the JVM's default free ratios give way to 20/60 so that the collection can shrink the
 * heap; ratios the user gave on the command line stay (checked in a child JVM started with one of them).
 */
class StartupHeapTest
{
    /**
     * The child JVM: releases, then prints both ratios.
     *
     * @param args none.
     */
    public static void main(final String[] args)
    {
        StartupHeap.release();
        System.out.println(ratios());
    }

    private static String ratios()
    {
        final HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        return vm.getVMOption("MinHeapFreeRatio").getValue() + "/" + vm.getVMOption("MaxHeapFreeRatio").getValue();
    }

    @Test
    void shouldLetTheHeapShrinkWhereTheUserLeftTheDefaults() throws Exception
    {
        assertEquals("20/60", child(List.of()));
    }

    @Test
    void shouldKeepRatiosTheUserGave() throws Exception
    {
        assertEquals("10/60", child(List.of("-XX:MinHeapFreeRatio=10", "-XX:MaxHeapFreeRatio=60")));
        assertEquals("40/50", child(List.of("-XX:MaxHeapFreeRatio=50")));
        assertEquals("10/70", child(List.of("-XX:MinHeapFreeRatio=10")));
    }

    private static String child(final List<String> jvmFlags) throws Exception
    {
        return ChildMain.output(StartupHeapTest.class, jvmFlags);
    }
}
