package dev.tapedeck.cli;

import java.nio.file.Path;
import java.util.List;

import picocli.CommandLine;

import dev.tapedeck.fault.FaultMix;
import dev.tapedeck.fault.FaultSchedule;
import dev.tapedeck.fault.FaultSettings;

/**
 * Fault-injection flags: llm-d-inference-sim's {@code --failure-injection-rate} and {@code --failure-types}, and
 * tapedeck's {@code --allow-fault-headers} and {@code --fault-schedule}.
 */
final class FaultOptions
{
    @CommandLine.Option(names = "--failure-injection-rate", paramLabel = "PERCENT", defaultValue = "0",
        description = "Share of requests, 0 to 100, that get one of --failure-types instead of a normal answer " +
            "(llm-d-inference-sim's flag; default: ${DEFAULT-VALUE}).")
    double rate;

    @CommandLine.Option(names = "--failure-types", arity = "1..*", split = ",", paramLabel = "FAULT",
        description = "Faults drawn, with equal chance, for --failure-injection-rate: llm-d-inference-sim's " +
            "rate_limit, invalid_api_key, context_length, server_error, invalid_request, model_not_found (its " +
            "default: all six), and tapedeck's status:CODE, reset@N, stall:DURATION@N, first-byte:DURATION, " +
            "abort@N. Space- or comma-separated.")
    List<String> types;

    @CommandLine.Option(names = "--allow-fault-headers",
        description = "Honour the per-request fault headers x-tapedeck-fault: FAULT (the --failure-types grammar) " +
            "and llm-d-inference-sim's X-Return-Error: STATUS. Off by default: a client cannot make the server " +
            "fail.")
    boolean allowHeaders;

    @CommandLine.Option(names = "--fault-schedule", paramLabel = "FILE",
        description = "A timeline of instance faults, one per line: 't=60s instance 3 unhealthy for 20s'; faults " +
            "unhealthy, down, stall, failures PERCENT FAULTS, kv-events drop, kv-events delay DURATION " +
            "(docs/faults.md).")
    Path schedule;

    /**
     * @return the settings the flags describe.
     * @throws IllegalArgumentException naming a fault or schedule line that does not parse.
     */
    FaultSettings settings()
    {
        final FaultMix mix = FaultMix.of(rate, null == types ? null : String.join(",", types));
        return new FaultSettings(mix, allowHeaders, null == schedule ? FaultSchedule.NONE :
            FaultSchedule.read(schedule));
    }
}
