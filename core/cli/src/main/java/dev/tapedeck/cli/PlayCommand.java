package dev.tapedeck.cli;

import java.util.concurrent.Callable;

import picocli.CommandLine;

import dev.tapedeck.build.TapedeckVersion;
import dev.tapedeck.capture.TraceRecorder;
import dev.tapedeck.kvevents.KvEventPublisher;
import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;
import dev.tapedeck.protocol.enginecore.VllmLine;

/**
 * {@code tapedeck play}: simulated engine cores behind a real vLLM frontend, over vLLM's ZeroMQ + msgpack protocol.
 */
@CommandLine.Command(
    name = "play",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Act as N vLLM engine cores for a real vLLM frontend started without local engines, speaking vLLM's " +
            "engine-core protocol (ZeroMQ + msgpack). Same engine, scheduler and latency models as serve.",
        "Example: tapedeck play --handshake-address tcp://127.0.0.1:29550",
        "  then:  vllm serve Qwen/Qwen3-8B --data-parallel-size 1 --data-parallel-size-local 0 " +
            "--data-parallel-address 127.0.0.1 --data-parallel-rpc-port 29550"})
public final class PlayCommand implements Callable<Integer>
{
    private static final System.Logger LOG = System.getLogger(PlayCommand.class.getName());

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Option(names = "--handshake-address", required = true, paramLabel = "ENDPOINT",
        description = "The frontend's handshake address: tcp://<data-parallel-address>:<data-parallel-rpc-port>.")
    String handshakeAddress;

    @CommandLine.Option(names = "--engine-count", defaultValue = "1", paramLabel = "N",
        description = "Engines to run, with identities 0..N-1 (match the frontend's --data-parallel-size; " +
            "default: ${DEFAULT-VALUE}).")
    int engineCount;

    @CommandLine.Option(names = "--vllm-line", defaultValue = "0.28", paramLabel = "VERSION",
        description = "The frontend's vLLM version or line (0.10 .. 0.28 and newer; default: ${DEFAULT-VALUE}, " +
            "the newest confirmed). See docs/engine-core.md.")
    String vllmLine;

    @CommandLine.Option(names = "--handshake-timeout", defaultValue = "5m", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "How long to wait for the frontend's INIT (default: ${DEFAULT-VALUE}).")
    long handshakeTimeoutNs;

    @CommandLine.Option(names = "--shutdown-timeout", defaultValue = "10s", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "On SIGTERM/SIGINT, how long running requests may finish before they are aborted " +
            "(default: ${DEFAULT-VALUE}).")
    long shutdownTimeoutNs;

    @CommandLine.Option(names = "--model", paramLabel = "NAME",
        description = "The model the engine stands for: its profile or physics prediction times the steps and sizes " +
            "the KV cache, as under serve (docs/latency-models.md), and it names the model in the P/D handshake hash " +
            "(the frontend names the served model).")
    String model;

    @CommandLine.Mixin
    EngineOptions engine = new EngineOptions();

    @CommandLine.Mixin
    KvEventsOptions kvEvents = new KvEventsOptions();

    @CommandLine.Mixin
    CaptureOptions capture = new CaptureOptions();

    @CommandLine.Mixin
    KvTransferOptions kvTransfer = new KvTransferOptions();

    @CommandLine.Option(names = "--fault-schedule", paramLabel = "FILE",
        description = "A timeline of engine faults, one per line, timed from each engine's handshake: " +
            "'t=60s instance 1 dead'; faults die, dead, stall, kv-events drop, kv-events delay DURATION " +
            "(docs/faults.md).")
    java.nio.file.Path faultSchedule;

    /**
     * @return the settings the flags describe.
     * @throws IllegalArgumentException if a flag's value is invalid.
     */
    PlayContext context()
    {
        final VllmLine line = VllmLine.of(vllmLine);
        engine.capacityModel(model).realFrontend();
        kvTransfer.offloadInto(engine.offload);
        return new PlayContext()
            .handshakeAddress(handshakeAddress)
            .engineCount(engineCount)
            .vllmLine(line)
            .handshakeTimeoutNs(handshakeTimeoutNs)
            .shutdownTimeoutNs(shutdownTimeoutNs)
            .engine(engine.template())
            .tokenizerFile(engine.tokenizerFile)
            .kvEvents(kvEvents.enabled ? kvEvents.settings(line, "", 0) : null)
            .kvTransfer(kvTransfer.settings(model, engine.kvBytesPerToken), null == model ? "tapedeck-play" : model)
            .capture(capture.settings())
            .faults(null == faultSchedule ? null : dev.tapedeck.fault.FaultSchedule.read(faultSchedule));
    }

    @Override
    public Integer call() throws Exception
    {
        final Play play = Play.start(context());
        final PlayContext context = play.context();
        final TraceRecorder recorder = play.traceRecorder();
        ServeCommand.onSignal("running", context.shutdownTimeoutNs(), play::shutdown, recorder,
            context.capture().traceOut());
        for (int i = 0; i < play.kvEventPublishers().size(); i++)
        {
            final KvEventPublisher publisher = play.kvEventPublishers().get(i);
            LOG.log(System.Logger.Level.INFO, "engine {0}: KV events on {1} (topic ''{2}''){3}", i,
                publisher.endpoint(), publisher.settings().topic(), null == publisher.replayEndpoint() ?
                "" : ", replay on " + publisher.replayEndpoint());
        }
        LOG.log(System.Logger.Level.INFO, "tapedeck {0} play: {1} engine(s) connecting to {2} (vLLM line {3}, " +
            "output tokens from {4})", TapedeckVersion.version(), context.engineCount(), context.handshakeAddress(),
            context.vllmLine().label(), null == play.tokenizer() ? "each request's prompt" : play.tokenizer().name());
        return awaitFatal(play);
    }

    /** Run until the engines cannot go on (exit 1 with one line saying why); a signal ends the process first. */
    private int awaitFatal(final Play play) throws InterruptedException
    {
        String fatal;
        while (null == (fatal = play.fatal()))
        {
            Thread.sleep(100);
        }
        spec.commandLine().getErr().println("tapedeck play: error: " + fatal);
        return 1;
    }
}
