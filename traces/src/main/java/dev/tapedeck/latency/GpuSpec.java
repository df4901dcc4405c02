package dev.tapedeck.latency;

import java.util.List;
import java.util.Locale;

/**
 * What a GPU can do, from its vendor's data sheet: the roofline of the physics step model ({@link RooflineStepModel})
 * and the memory that sizes the KV cache. Figures are the dense (no sparsity) bf16 tensor rate, the memory
 * bandwidth, the memory size, and the per-direction bandwidth of the link tensor parallelism all-reduces over
 * (NVLink, or PCIe for cards without it).
 * <p>
 * Immutable; thread safe.
 *
 * @param name the name {@code --gpu} takes.
 * @param bf16FlopsPerS dense bf16 tensor FLOP/s.
 * @param memoryBytesPerS memory (HBM or GDDR) bandwidth in bytes/s.
 * @param memoryBytes memory size in bytes: the data sheet's "GB" of HBM or GDDR are binary (an "80 GB" H100 has 80
 *     GiB; vLLM's KV block counts on it match 80 x 2^30 bytes, not 80 x 10^9).
 * @param linkBytesPerS per-direction bandwidth of the GPU-to-GPU link, bytes/s.
 */
public record GpuSpec(String name, double bf16FlopsPerS, double memoryBytesPerS, long memoryBytes,
    double linkBytesPerS)
{
    private static final double T = 1e12;
    private static final long GIB = 1L << 30;

    /** Built-in GPUs (SXM/OAM parts where there are several). */
    public static final List<GpuSpec> KNOWN = List.of(
        new GpuSpec("H100", 989 * T, 3.35 * T, 80 * GIB, 450e9),
        new GpuSpec("H200", 989 * T, 4.8 * T, 141 * GIB, 450e9),
        new GpuSpec("B200", 2250 * T, 8.0 * T, 180 * GIB, 900e9),
        new GpuSpec("A100", 312 * T, 2.039 * T, 80 * GIB, 300e9),
        new GpuSpec("A100-40GB", 312 * T, 1.555 * T, 40 * GIB, 300e9),
        new GpuSpec("L40S", 362 * T, 0.864 * T, 48 * GIB, 32e9),
        new GpuSpec("L4", 121 * T, 0.3 * T, 24 * GIB, 32e9),
        new GpuSpec("A10G", 70 * T, 0.6 * T, 24 * GIB, 32e9),
        new GpuSpec("RTX-4090", 165 * T, 1.008 * T, 24 * GIB, 32e9),
        new GpuSpec("RTX-PRO-6000", 504 * T, 1.792 * T, 96 * GIB, 64e9),
        new GpuSpec("MI300X", 1307 * T, 5.3 * T, 192 * GIB, 448e9));

    /**
     * Validates the figures.
     */
    public GpuSpec
    {
        if (!(bf16FlopsPerS > 0 && memoryBytesPerS > 0 && memoryBytes > 0 && linkBytesPerS > 0))
        {
            throw new IllegalArgumentException("GPU '" + name + "': every figure must be positive");
        }
    }

    /**
     * @return the per-direction bandwidth of the GPU's link to host memory, bytes/s, for KV copied to and from a CPU
     *     tier: 50 GB/s for PCIe 5.0 x16 parts (what vLLM's offloading work measured for one direction on an H100),
     *     half that for PCIe 4.0 parts (A100, L40S, L4, A10G, RTX-4090).
     */
    public double hostLinkBytesPerS()
    {
        return switch (name)
        {
            case "A100", "A100-40GB", "L40S", "L4", "A10G", "RTX-4090" -> 25e9;
            default -> 50e9;
        };
    }

    /**
     * @param gpu a GPU name, case-insensitive; spaces, underscores and dashes are the same.
     * @return its figures.
     * @throws IllegalArgumentException naming the known GPUs when the name is unknown.
     */
    public static GpuSpec lookup(final String gpu)
    {
        final String wanted = normalise(gpu);
        for (final GpuSpec known : KNOWN)
        {
            if (normalise(known.name).equals(wanted))
            {
                return known;
            }
        }
        throw new IllegalArgumentException("unknown GPU '" + gpu + "'; known: " +
            String.join(", ", KNOWN.stream().map(GpuSpec::name).toList()));
    }

    private static String normalise(final String name)
    {
        return name.toUpperCase(Locale.ROOT).replace(' ', '-').replace('_', '-');
    }
}
