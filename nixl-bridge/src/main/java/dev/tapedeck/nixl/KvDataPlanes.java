package dev.tapedeck.nixl;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Opens the {@link KvDataPlane} that {@code --kv-data-plane} asks for, failing over with a logged reason: a plane
 * that cannot start (its native library missing, UCX failing to initialise, a port it cannot bind) gives way to the
 * next one down the chain {@code nixl -> ucx -> tcp -> noop}; {@code auto} starts at the top. {@code noop} always
 * opens.
 * <p>
 * Stateless; thread safe.
 */
public final class KvDataPlanes
{
    /** The planes, best first; {@code auto} tries them in this order. */
    public static final List<String> KINDS = List.of("nixl", "ucx", "tcp", "noop");

    private static final System.Logger LOG = System.getLogger(KvDataPlanes.class.getName());

    private KvDataPlanes()
    {
    }

    /**
     * A plane and why the ones above it were not used.
     *
     * @param plane the opened plane.
     * @param fallbacks one line per plane tried and refused, naming it and the reason; empty when the first one
     *     opened.
     */
    public record Opened(KvDataPlane plane, List<String> fallbacks)
    {
    }

    /**
     * @param settings what to open; its kind is one of {@link #KINDS} or {@code auto}.
     * @return the opened plane.
     * @throws IllegalArgumentException for an unknown kind.
     */
    public static Opened open(final KvDataPlaneSettings settings)
    {
        final String kind = settings.kind().toLowerCase(Locale.ROOT);
        final int first = "auto".equals(kind) ? 0 : KINDS.indexOf(kind);
        if (first < 0)
        {
            throw new IllegalArgumentException("unknown KV data plane '" + settings.kind() + "': expected auto, " +
                String.join(", ", KINDS));
        }
        final List<String> fallbacks = new ArrayList<>();
        for (int i = first; i < KINDS.size(); i++)
        {
            final String candidate = KINDS.get(i);
            try
            {
                final KvDataPlane plane = openOne(settings.withKind(candidate));
                for (final String reason : fallbacks)
                {
                    LOG.log(System.Logger.Level.WARNING, reason);
                }
                if (!fallbacks.isEmpty() || "auto".equals(kind))
                {
                    LOG.log(System.Logger.Level.INFO, "KV data plane: {0}", candidate);
                }
                return new Opened(plane, List.copyOf(fallbacks));
            }
            catch (final RuntimeException | LinkageError ex)
            {
                fallbacks.add("KV data plane " + candidate + " unavailable (" + ex.getMessage() + "); trying " +
                    KINDS.get(Math.min(i + 1, KINDS.size() - 1)));
            }
        }
        throw new IllegalStateException("unreachable: noop always opens");
    }

    private static KvDataPlane openOne(final KvDataPlaneSettings settings)
    {
        switch (settings.kind())
        {
            case "noop":
                return new NoopDataPlane();
            case "tcp":
                return new TcpDataPlane(settings);
            case "ucx":
                return new UcxDataPlane(settings);
            case "nixl":
                return new NixlDataPlane(settings);
            default:
                throw new KvTransferException("the " + settings.kind() + " plane is not built into this jar");
        }
    }
}
