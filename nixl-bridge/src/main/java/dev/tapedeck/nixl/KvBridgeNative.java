package dev.tapedeck.nixl;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Optional;

/**
 * The JNI binding of {@code libkvbridge.so}, tapedeck's shim over UCX ({@code libucp.so.0}) and NIXL
 * ({@code libnixl_capi.so}); both are opened by the shim with {@code dlopen}, never linked, so that UCX's SIGSEGV
 * handler cannot kill the JVM. The library comes from {@code -Dkvbridge.lib=/abs/path} if set, else from the jar's
 * resource {@code /native/<os>-<arch>/libkvbridge.so} (extracted to a temporary file). Any failure leaves the bridge
 * unavailable with a reason; nothing throws at class load.
 * <p>
 * <b>Threading</b>: the public methods may be called from any thread (loading happens once, under a lock). The
 * package-private natives that take a context must be called only from that context's owner thread (the plane's
 * I/O thread).
 */
public final class KvBridgeNative
{
    /** System property: an absolute path of {@code libkvbridge.so} to load instead of the jar's. */
    public static final String LIB_PROPERTY = "kvbridge.lib";
    /** System property: the UCX library the shim opens; default {@code libucp.so.0}. */
    public static final String UCP_PROPERTY = "kvbridge.ucp";
    /** System property: the NIXL C API library the shim opens; default: searched ({@code NIXL_PREFIX}, ...). */
    public static final String NIXL_LIB_PROPERTY = "kvbridge.nixl.lib";

    /** {@code kvb_open} backend: UCX. */
    static final int BACKEND_UCX = 0;
    /** {@code kvb_open} backend: NIXL. */
    static final int BACKEND_NIXL = 1;
    /** {@code kvb_open} flag: UCX endpoints must detect peer failure ({@code UCP_ERR_HANDLING_MODE_PEER}). */
    static final int EP_ERR_PEER = 0x100;
    /** {@code kvb_open} flag: UCX endpoints never ask for peer failure detection. */
    static final int EP_ERR_NONE = 0x200;
    /** {@code kvb_xfer_status}: done. */
    static final int XFER_DONE = 0;
    /** {@code kvb_xfer_status}: in progress. */
    static final int XFER_IN_PROGRESS = 1;

    private static final Object LOCK = new Object();
    private static Loaded loaded;
    private static String nixlReason;
    private static boolean nixlTried;

    private record Loaded(Path path, String libraryReason, String ucxReason)
    {
    }

    private KvBridgeNative()
    {
    }

    /**
     * @return true when {@code libkvbridge.so} is loaded and it opened UCX: the {@code ucx} plane can start.
     */
    public static boolean available()
    {
        return unavailableReason() == null;
    }

    /**
     * @return why the {@code ucx} plane cannot start (library missing for this OS/arch, load failure, dlopen of
     *     libucp failing), or null when {@link #available()}.
     */
    public static String unavailableReason()
    {
        final Loaded state = load();
        return state.libraryReason != null ? state.libraryReason : state.ucxReason;
    }

    /**
     * @return the shim's version, e.g. {@code kvb 1 / ucp 1.13.1}; {@code unavailable: <reason>} when the library is
     *     not loaded.
     */
    public static String version()
    {
        final Loaded state = load();
        return state.libraryReason != null ? "unavailable: " + state.libraryReason : nVersion();
    }

    /**
     * @return the file {@code libkvbridge.so} was loaded from (to hand to a child JVM as {@code -Dkvbridge.lib}).
     */
    public static Optional<Path> libraryPath()
    {
        final Loaded state = load();
        return state.libraryReason != null ? Optional.empty() : Optional.of(state.path);
    }

    /**
     * Opens {@code libnixl_capi.so} once ({@code -Dkvbridge.nixl.lib}, else {@code $NIXL_PREFIX/lib*},
     * {@code /opt/nvidia/nvda_nixl/lib*}, the default search path).
     *
     * @return why the {@code nixl} plane cannot start, or null when it can.
     */
    public static String nixlUnavailableReason()
    {
        final Loaded state = load();
        if (state.libraryReason != null)
        {
            return state.libraryReason;
        }
        synchronized (LOCK)
        {
            if (!nixlTried)
            {
                nixlTried = true;
                nixlReason = nLoadNixl(System.getProperty(NIXL_LIB_PROPERTY, ""));
            }
            return nixlReason;
        }
    }

    private static Loaded load()
    {
        synchronized (LOCK)
        {
            if (loaded == null)
            {
                loaded = loadLibrary();
            }
            return loaded;
        }
    }

    private static Loaded loadLibrary()
    {
        final Path path;
        try
        {
            path = locate();
        }
        catch (final IOException | IllegalStateException ex)
        {
            return new Loaded(null, ex.getMessage(), null);
        }
        try
        {
            System.load(path.toString());
        }
        catch (final UnsatisfiedLinkError | SecurityException ex)
        {
            return new Loaded(path, "cannot load " + path + ": " + ex.getMessage(), null);
        }
        final String ucxReason = nLoad(System.getProperty(UCP_PROPERTY, "libucp.so.0"));
        return new Loaded(path, null, ucxReason);
    }

    private static Path locate() throws IOException
    {
        final String override = System.getProperty(LIB_PROPERTY, "");
        if (!override.isBlank())
        {
            final Path path = Path.of(override);
            if (!path.isAbsolute() || !Files.isRegularFile(path))
            {
                throw new IllegalStateException("-D" + LIB_PROPERTY + "=" + override + " is not an absolute path " +
                    "of an existing file");
            }
            return path;
        }
        final String platform = platform();
        final String resource = "/native/" + platform + "/libkvbridge.so";
        try (InputStream in = KvBridgeNative.class.getResourceAsStream(resource))
        {
            if (in == null)
            {
                throw new IllegalStateException("no libkvbridge.so for " + platform + " in this jar (it is built " +
                    "only where the UCX headers, libucx-dev, are installed)");
            }
            final Path file = Files.createTempFile("libkvbridge", ".so");
            file.toFile().deleteOnExit();
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        }
    }

    private static String platform()
    {
        final String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        final String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        final String osName = os.startsWith("linux") ? "linux" : os.replace(' ', '_');
        final String archName = "amd64".equals(arch) || "x86_64".equals(arch) ? "x86_64" : arch;
        return osName + "-" + archName;
    }

    static native String nLoad(String libucp);

    static native String nLoadNixl(String libnixl);

    static native String nVersion();

    static native long nOpen(String agentName, int backend);

    static native long nPoolAlloc(long ctx, long bytes);

    static native ByteBuffer nPoolBuffer(long base, long offset, long bytes);

    static native byte[] nLocalMd(long ctx);

    static native int nLoadRemoteMd(long ctx, byte[] metadata);

    static native void nInvalidateRemote(long ctx, int peer);

    static native String nPeerStatus(long ctx, int peer);

    static native long nPostRead(long ctx, int peer, long[] remoteOffsets, long[] localOffsets, long bytes,
        byte[] notification);

    static native long nPostNotif(long ctx, int peer, byte[] notification);

    static native int nXferStatus(long ctx, long xfer);

    static native String nXferError(long ctx, long xfer);

    static native void nReleaseXfer(long ctx, long xfer);

    static native int nProgress(long ctx);

    static native byte[] nDrainNotifs(long ctx);

    static native void nClose(long ctx);
}
