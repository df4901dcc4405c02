package dev.tapedeck.cli;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.kv.KvCapacity;
import dev.tapedeck.latency.GpuSpec;
import dev.tapedeck.latency.ModelArchitecture;
import dev.tapedeck.latency.RooflineProfile;
import dev.tapedeck.latency.RooflineStepModel;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.testing.CliRun;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which step model and KV geometry the engine flags select: a measured profile for a model it was fitted to, the
 * physics prediction for any known architecture on --gpu / --tensor-parallel-size / --model-config, and the old
 * default for a model nobody described.
 */
class PhysicsProfileOptionsTest
{
    @TempDir
    Path dir;

    private static EngineConfig template(final String model, final String... args)
    {
        final EngineOptions options = new EngineOptions();
        new CommandLine(options).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(args);
        return options.capacityModel(model).template();
    }

    @Test
    void shouldPickTheMeasuredProfileOfAKnownModelWithItsKvGeometryAndFrontend()
    {
        final EngineConfig config = template("meta-llama/Llama-2-70b-chat-hf");
        final RooflineStepModel model = assertInstanceOf(RooflineStepModel.class, config.latencyModel());
        assertEquals("llama-2-70b-tp4-h100", model.coefficients().name());
        assertEquals(4, model.tensorParallel());
        // a 70B model on 4 H100s, not the 8B default of 33,600 blocks
        assertEquals(KvCapacity.blocks(model.model(), GpuSpec.lookup("H100"), 4, 0.9, 16), config.kvCacheBlocks());
        assertEquals(RooflineProfile.named("llama-2-70b-tp4-h100").frontendDelayNs(), config.frontendDelayNs());
        assertEquals(1_000_000, template("meta-llama/Llama-2-70b-hf", "--frontend-delay", "1ms").frontendDelayNs());
        // the knob and trace models time what a client sees: no modelled frontend, no physics KV geometry
        final EngineConfig knob = template("meta-llama/Llama-2-70b-hf", "--time-to-first-token", "100ms");
        assertEquals(0, knob.frontendDelayNs());
        assertEquals(EngineConfig.DEFAULT_KV_CACHE_BLOCKS, knob.kvCacheBlocks());
        // behind a real API server (play) the frontend is real: none is modelled unless asked
        final EngineOptions play = new EngineOptions();
        new CommandLine(play).setCaseInsensitiveEnumValuesAllowed(true).parseArgs();
        final EngineConfig behindVllm = play.capacityModel("meta-llama/Llama-2-70b-hf").realFrontend().template();
        assertEquals(0, behindVllm.frontendDelayNs());
        assertEquals(0, behindVllm.frontendDelayJitter());
        assertInstanceOf(RooflineStepModel.class, behindVllm.latencyModel());
    }

    @Test
    void shouldPredictAnUnmeasuredDeploymentFromItsArchitectureAndGpu()
    {
        final EngineConfig config = template("meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h200",
            "--tensor-parallel-size", "4");
        final RooflineStepModel model = assertInstanceOf(RooflineStepModel.class, config.latencyModel());
        assertEquals("H200", model.gpu().name());
        assertEquals(RooflineProfile.ACROSS_MODELS_H100, model.coefficients());
        assertEquals(KvCapacity.blocks(model.model(), GpuSpec.lookup("H200"), 4, 0.9, 16), config.kvCacheBlocks());
        // the measured profile is for TP 4: another size is a prediction
        final RooflineStepModel tp8 = assertInstanceOf(RooflineStepModel.class,
            template("meta-llama/Llama-2-70b-hf", "--tensor-parallel-size", "8").latencyModel());
        assertEquals(RooflineProfile.ACROSS_MODELS_H100, tp8.coefficients());
        // an explicit --kv-cache-size still wins
        assertEquals(5000, template("meta-llama/Llama-2-7b-hf", "--kv-cache-size", "5000").kvCacheBlocks());
    }

    @Test
    void shouldKeepTheDefaultProfileForTheDefaultModelAndNamedProfiles()
    {
        final EngineConfig config = template("Qwen/Qwen3-8B");
        assertInstanceOf(StepLatencyModel.class, config.latencyModel());
        assertEquals(EngineConfig.DEFAULT_KV_CACHE_BLOCKS, config.kvCacheBlocks());
        assertEquals(0, config.frontendDelayNs());
        final RooflineStepModel named = assertInstanceOf(RooflineStepModel.class,
            template("Qwen/Qwen3-8B", "--step-profile", "mixtral-8x7b-tp2-h100").latencyModel());
        assertEquals("mistralai/Mixtral-8x7B-v0.1", named.model().name());
        assertInstanceOf(StepLatencyModel.class,
            template("meta-llama/Llama-2-7b-hf", "--step-profile", "dense-8b-rtxpro6000").latencyModel());
    }

    @Test
    void shouldGiveEveryKnownModelItsOwnTimingAndKvGeometry()
    {
        // a linear profile fitted on the model: its coefficients, the KV cache its GPUs leave
        final EngineConfig qwen32 = template("Qwen/Qwen3-32B");
        assertEquals("dense-32b-tp2-rtxpro6000", assertInstanceOf(StepLatencyModel.class, qwen32.latencyModel())
            .coefficients().name());
        assertEquals(KvCapacity.blocks(ModelArchitecture.lookup("Qwen/Qwen3-32B"), GpuSpec.lookup("RTX-PRO-6000"), 2,
            0.9, 16), qwen32.kvCacheBlocks());
        final EngineConfig llama8 = template("meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory-utilization", "0.8");
        assertEquals("dense-8b-rtxpro6000", assertInstanceOf(StepLatencyModel.class, llama8.latencyModel())
            .coefficients().name());
        assertEquals(KvCapacity.blocks(ModelArchitecture.lookup("meta-llama/Llama-3.1-8B"),
            GpuSpec.lookup("RTX-PRO-6000"), 1, 0.8, 16), llama8.kvCacheBlocks());
        // a known model without a profile: predicted on H100s, as few as leave 128k tokens of KV cache
        final EngineConfig llama70 = template("meta-llama/Llama-3.1-70B");
        final RooflineStepModel predicted = assertInstanceOf(RooflineStepModel.class, llama70.latencyModel());
        assertEquals("H100", predicted.gpu().name());
        assertEquals(4, predicted.tensorParallel());
        final ModelArchitecture seventy = ModelArchitecture.lookup("meta-llama/Llama-3.1-70B");
        assertEquals(KvCapacity.blocks(seventy, GpuSpec.lookup("H100"), 4, 0.9, 16), llama70.kvCacheBlocks());
        assertTrue(16L * KvCapacity.blocks(seventy, GpuSpec.lookup("H100"), 2, 0.9, 16) < 131_072,
            "two H100s would leave too little");
        assertEquals(1, assertInstanceOf(RooflineStepModel.class, template("Qwen/Qwen3-14B").latencyModel())
            .tensorParallel());
        assertEquals(31_000, template("Qwen/Qwen3-32B", "--kv-cache-size", "31000").kvCacheBlocks(),
            "an explicit size wins");
        assertEquals(8, assertInstanceOf(RooflineStepModel.class, template("meta-llama/Llama-3.1-70B",
            "--gpu-memory-utilization", "0.5").latencyModel()).tensorParallel(), "half of each GPU: more GPUs");
        assertEquals(2, assertInstanceOf(RooflineStepModel.class, template("meta-llama/Llama-3.1-70B", "--gpu", "H200")
            .latencyModel()).tensorParallel(), "a named GPU: as few as hold the weights");
        assertEquals("dense-8b-rtxpro6000+custom", assertInstanceOf(StepLatencyModel.class, template(
            "meta-llama/Llama-3.1-70B", "--step-base", "2ms").latencyModel()).coefficients().name(),
            "linear overrides keep the linear default rather than fail");
        final ModelArchitecture qwen32Dims = ModelArchitecture.lookup("Qwen/Qwen3-32B");
        assertEquals(KvCapacity.blocks(96_000_000_000L, 0.9, qwen32Dims.weightBytesPerGpu(2),
            KvCapacity.DEFAULT_OVERHEAD_BYTES, (long)qwen32Dims.kvBytesPerTokenPerGpu(2), 16),
            template("Qwen/Qwen3-32B", "--gpu-memory-gb", "96").kvCacheBlocks(), "GPU memory per GPU of the profile");
        // a name nobody described keeps the default
        final EngineConfig unknown = template("acme/unknown");
        assertEquals("dense-8b-rtxpro6000", assertInstanceOf(StepLatencyModel.class, unknown.latencyModel())
            .coefficients().name());
        assertEquals(EngineConfig.DEFAULT_KV_CACHE_BLOCKS, unknown.kvCacheBlocks());
    }

    @Test
    void shouldNameTheModelAProfileWasMeasuredOnWhenNoModelIsGiven()
    {
        final CommandLine cli = Main.commandLine();
        cli.parseArgs("serve", "--step-profile", "dense-32b-tp2-rtxpro6000");
        final dev.tapedeck.serve.ServeContext qwen32 = ((ServeCommand)cli.getSubcommands().get("serve").getCommand())
            .context();
        assertEquals("Qwen/Qwen3-32B", qwen32.model());
        assertEquals(KvCapacity.blocks(ModelArchitecture.lookup("Qwen/Qwen3-32B"), GpuSpec.lookup("RTX-PRO-6000"), 2,
            0.9, 16), qwen32.engine().kvCacheBlocks());
        final CommandLine physics = Main.commandLine();
        physics.parseArgs("serve", "--step-profile", "llama-2-70b-tp4-h100");
        assertEquals("meta-llama/Llama-2-70b-hf", ((ServeCommand)physics.getSubcommands().get("serve").getCommand())
            .context().model());
        final CommandLine named = Main.commandLine();
        named.parseArgs("serve", "--model", "acme/mine", "--step-profile", "dense-32b-tp2-rtxpro6000");
        assertEquals("acme/mine", ((ServeCommand)named.getSubcommands().get("serve").getCommand()).context().model(),
            "a given name stays");
        final CommandLine plain = Main.commandLine();
        plain.parseArgs("serve", "--step-profile", "dense-8b-rtxpro6000");
        assertEquals("Qwen/Qwen3-8B", ((ServeCommand)plain.getSubcommands().get("serve").getCommand()).context()
            .model(), "the default profile keeps the default model");
    }

    @Test
    void shouldReadTheArchitectureFromAConfigJson() throws Exception
    {
        final Path config = dir.resolve("config.json");
        Files.writeString(config, "{\"_name_or_path\":\"acme/tiny\",\"hidden_size\":1024,\"num_attention_heads\":16," +
            "\"num_key_value_heads\":4,\"num_hidden_layers\":12,\"intermediate_size\":4096,\"vocab_size\":50000}");
        final RooflineStepModel model = assertInstanceOf(RooflineStepModel.class,
            template("acme/tiny", "--model-config", config.toString(), "--gpu", "L4").latencyModel());
        final ModelArchitecture tiny = model.model();
        assertEquals("acme/tiny", tiny.name());
        assertEquals(64, tiny.headDim());
        assertEquals(2L * 12 * 4 * 64 * 2, tiny.kvBytesPerToken(2));
    }

    @Test
    void shouldRefuseWithOneLine()
    {
        final IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
            () -> template("acme/unknown", "--gpu", "H100"));
        assertTrue(unknown.getMessage().contains("no built-in architecture for model 'acme/unknown'"),
            unknown.getMessage());
        final IllegalArgumentException gpu = assertThrows(IllegalArgumentException.class,
            () -> template("meta-llama/Llama-2-7b-hf", "--gpu", "TPU"));
        assertTrue(gpu.getMessage().startsWith("unknown GPU 'TPU'; known: H100"), gpu.getMessage());
        final IllegalArgumentException both = assertThrows(IllegalArgumentException.class,
            () -> template("meta-llama/Llama-2-70b-hf", "--step-profile", "llama-2-70b-tp4-h100",
                "--tensor-parallel-size", "8"));
        assertTrue(both.getMessage().contains("--step-profile names a whole deployment"), both.getMessage());
        final IllegalArgumentException linear = assertThrows(IllegalArgumentException.class,
            () -> template("meta-llama/Llama-2-7b-hf", "--step-base", "1ms"));
        assertTrue(linear.getMessage().contains("not the physics profile llama-2-7b-tp1-h100"), linear.getMessage());
        final CliRun missing = CliRun.of("serve", "--port", "0", "--model-config",
            dir.resolve("absent.json").toString(), "--gpu", "H100");
        assertEquals(2, missing.exitCode());
        assertTrue(missing.err().contains("--model-config"), missing.err());
    }

    @Test
    void shouldTakeTheContextLengthFromTheModelAsVllmDerivesIt() throws Exception
    {
        assertEquals(40_960, template("Qwen/Qwen3-8B").maxModelLen());
        assertEquals(131_072, template("meta-llama/Llama-3.1-8B-Instruct").maxModelLen());
        assertEquals(262_144, template("Qwen/Qwen3-30B-A3B-Instruct-2507").maxModelLen());
        // the measured physics profile's model: Llama-2's 4k
        assertEquals(4096, template("meta-llama/Llama-2-70b-chat-hf").maxModelLen());
        // a model nobody described keeps the old default; the flag always wins
        assertEquals(EngineConfig.DEFAULT_MAX_MODEL_LEN, template("my-finetune").maxModelLen());
        assertEquals(2048, template("meta-llama/Llama-3.1-8B", "--max-model-len", "2048").maxModelLen());
        // never more than the KV cache holds (vLLM's auto fit), so a small cache still starts
        assertEquals(100 * 16, template("meta-llama/Llama-3.1-8B", "--kv-cache-size", "100").maxModelLen());
        // a config.json: the smallest length field, extended by a YaRN factor from its original length
        final Path config = dir.resolve("config.json");
        Files.writeString(config, "{\"hidden_size\": 1024, \"num_attention_heads\": 16, \"num_key_value_heads\": 8, " +
            "\"intermediate_size\": 3072, \"num_hidden_layers\": 4, \"vocab_size\": 1000, " +
            "\"max_position_embeddings\": 40960, \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0, " +
            "\"original_max_position_embeddings\": 32768}}");
        assertEquals(131_072, ModelArchitecture.read(config).contextLength());
        Files.writeString(config, "{\"hidden_size\": 1024, \"num_attention_heads\": 16, \"intermediate_size\": 3072, " +
            "\"num_hidden_layers\": 4, \"vocab_size\": 1000, \"max_position_embeddings\": 131072, " +
            "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0}}");
        assertEquals(131_072, ModelArchitecture.read(config).contextLength());
        assertEquals(131_072, template("custom", "--model-config", config.toString()).maxModelLen());
    }

    @Test
    void shouldCountTheGpusOneEngineStandsFor()
    {
        final java.util.function.BiFunction<String, String[], Integer> gpus = (model, args) ->
        {
            final EngineOptions options = new EngineOptions();
            new CommandLine(options).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(args);
            return options.capacityModel(model).gpusPerEngine();
        };
        assertEquals(1, gpus.apply("Qwen/Qwen3-8B", new String[0]));
        assertEquals(2, gpus.apply("Qwen/Qwen3-32B", new String[0]), "the measured profile's TP 2");
        assertEquals(4, gpus.apply("meta-llama/Llama-2-70b-hf", new String[0]), "the H100 physics profile's TP 4");
        assertEquals(8, gpus.apply("meta-llama/Llama-3.1-70B", new String[] {"--gpu", "h100",
            "--tensor-parallel-size", "8"}));
    }

    @Test
    void shouldRaiseTheStepBudgetToTheContextWithoutChunkedPrefill()
    {
        assertEquals(8192, template("Qwen/Qwen3-8B", "--max-num-batched-tokens", "8192").maxNumBatchedTokens());
        // vLLM's engine arguments: without chunked prefill any prompt must fit in one step
        assertEquals(40_960, template("Qwen/Qwen3-8B", "--max-num-batched-tokens", "8192",
            "--no-enable-chunked-prefill").maxNumBatchedTokens());
        assertEquals(65_536, template("Qwen/Qwen3-8B", "--max-num-batched-tokens", "65536",
            "--no-enable-chunked-prefill").maxNumBatchedTokens());
        assertEquals(40_960, EngineConfig.stepBudget(false, 8192, 40_960));
        assertEquals(8192, EngineConfig.stepBudget(true, 8192, 40_960));
    }
}
