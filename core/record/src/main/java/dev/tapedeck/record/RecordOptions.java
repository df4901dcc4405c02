package dev.tapedeck.record;

import java.nio.file.Path;

/**
 * Settings of {@code tapedeck record} (docs/record.md). Immutable.
 *
 * @param frontendHandshake the real frontend's handshake ROUTER, which the tap connects to as engine 0.
 * @param engineHandshake where the tap binds the handshake ROUTER the real engine connects to.
 * @param inputAddress where the tap binds the ROUTER the engine takes requests from (INIT names it).
 * @param outputAddress where the tap binds the PULL the engine sends outputs to (INIT names it).
 * @param traceOut the trace file (gzip when it ends with {@code .gz}).
 * @param stepStatsOut the step-stats sidecar, or null for none.
 * @param model meta {@code model}, or null.
 * @param gpu meta {@code gpu} and config-hash input, or null.
 * @param tp meta {@code tp}, or null.
 * @param configHash meta {@code config_hash} as given, or null to compute it.
 * @param vllmVersion the capture's vLLM tag (guard and config-hash input), or null.
 * @param maxNumSeqs meta {@code max_num_seqs}, or null.
 * @param engineConfig canonical engine configuration, config-hash input, or null.
 * @param blockSize tokens per block of the {@code block_hashes} fingerprints (0: none).
 * @param recordTokens keep output token ids.
 * @param handshakeTimeoutNs how long each side may take to come up and complete its handshake.
 */
public record RecordOptions(
    String frontendHandshake,
    String engineHandshake,
    String inputAddress,
    String outputAddress,
    Path traceOut,
    Path stepStatsOut,
    String model,
    String gpu,
    Long tp,
    String configHash,
    String vllmVersion,
    Long maxNumSeqs,
    String engineConfig,
    int blockSize,
    boolean recordTokens,
    long handshakeTimeoutNs)
{
    /**
     * Validates.
     */
    public RecordOptions
    {
        tcpOnly(frontendHandshake, "--frontend-handshake");
        tcpOnly(engineHandshake, "--engine-handshake");
        connectable(tcpOnly(inputAddress, "--input-address"), "--input-address");
        connectable(tcpOnly(outputAddress, "--output-address"), "--output-address");
        if (blockSize < 0)
        {
            throw new IllegalArgumentException("--block-size must be 0 (no block_hashes) or more, got " + blockSize);
        }
        if (handshakeTimeoutNs <= 0)
        {
            throw new IllegalArgumentException("--handshake-timeout must be positive");
        }
    }

    private static String tcpOnly(final String address, final String flag)
    {
        if (null == address || !address.startsWith("tcp://"))
        {
            throw new IllegalArgumentException(flag + " must be a ZeroMQ TCP endpoint such as tcp://127.0.0.1:5580, " +
                "got '" + address + "'" + (null != address && address.startsWith("ipc://") ?
                " (JeroMQ cannot reach libzmq's Unix-domain ipc:// sockets)" : ""));
        }
        return address;
    }

    private static void connectable(final String address, final String flag)
    {
        if (address.startsWith("tcp://*") || address.startsWith("tcp://0.0.0.0") || address.startsWith("tcp://[::]"))
        {
            throw new IllegalArgumentException(flag + " " + address + " is sent to the engine in INIT, which " +
                "connects to it: give an address the engine can reach (e.g. tcp://10.0.0.5:29560), not a wildcard");
        }
    }
}
