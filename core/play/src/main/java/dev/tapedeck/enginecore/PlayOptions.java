package dev.tapedeck.enginecore;

import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import dev.tapedeck.fault.FaultSchedule;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.tokens.TokenVocabulary;

/**
 * Settings of the engine-core face ({@code tapedeck play}); engine settings are in {@code EngineConfig}. Immutable.
 *
 * @param handshakeAddress the frontend's handshake ROUTER, e.g. {@code tcp://127.0.0.1:29550}.
 * @param engineCount engines, with identities 0..N-1.
 * @param line the frontend's vLLM line (wire dialect).
 * @param vocabulary the served model's vocabulary for random output, or null to draw output tokens from each
 *     request's own prompt (always valid ids for the frontend's tokenizer).
 * @param handshakeTimeoutNs how long to wait for the frontend's INIT.
 * @param shutdownTimeoutNs how long running requests may finish on shutdown.
 * @param engineClock the engines' clock: step times, arrivals, output timestamps (null: {@link System#nanoTime()});
 *     the handshake's timeout is always real time.
 * @param faults the engine faults of {@code --fault-schedule} ({@code die}, {@code dead}, {@code stall},
 *     {@code kv-events}), timed from each engine's handshake; {@link FaultSchedule#NONE} for none.
 */
public record PlayOptions(
    String handshakeAddress,
    int engineCount,
    VllmLine line,
    TokenVocabulary vocabulary,
    long handshakeTimeoutNs,
    long shutdownTimeoutNs,
    NanoClock engineClock,
    FaultSchedule faults)
{
    /** The schedule's faults an engine core can have; the others are the HTTP server's (serve, or vLLM's own). */
    public static final java.util.Set<FaultSchedule.Action> ENGINE_FAULTS = java.util.EnumSet.of(
        FaultSchedule.Action.DIE, FaultSchedule.Action.DEAD, FaultSchedule.Action.STALL,
        FaultSchedule.Action.KV_EVENTS_DROP, FaultSchedule.Action.KV_EVENTS_DELAY);

    /**
     * Validates.
     */
    public PlayOptions
    {
        engineClock = null == engineClock ? SystemNanoClock.INSTANCE : engineClock;
        faults = null == faults ? FaultSchedule.NONE : faults;
        faults.requireOnly(ENGINE_FAULTS, "play (vLLM's frontend serves HTTP; use them with serve)");
        if (engineCount < 1 || engineCount > 1024)
        {
            throw new IllegalArgumentException("--engine-count must be within 1..1024");
        }
        if (!handshakeAddress.startsWith("tcp://"))
        {
            throw new IllegalArgumentException("--handshake-address must be a ZeroMQ TCP endpoint such as " +
                "tcp://127.0.0.1:29550, got '" + handshakeAddress + "'" + (handshakeAddress.startsWith("ipc://") ?
                " (JeroMQ cannot reach libzmq's Unix-domain ipc:// sockets)" : ""));
        }
    }
}
