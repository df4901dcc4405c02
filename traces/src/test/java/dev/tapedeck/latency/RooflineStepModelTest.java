package dev.tapedeck.latency;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The physics step model against hand arithmetic: a decode step of a dense model reads its weights once, tensor
 * parallelism splits them and adds all-reduces, KV heads shard no further than their number, a mixture of experts
 * reads the experts its tokens touch, a big prefill chunk is compute-bound; and the terms the fit solves for add up to
 * the duration.
 */
class RooflineStepModelTest
{
    private static final SeededRandom RANDOM = new SeededRandom(1);
    private static final GpuSpec H100 = GpuSpec.lookup("H100");
    private static final ModelArchitecture LLAMA_7B = ModelArchitecture.lookup("meta-llama/Llama-2-7b-hf");
    private static final ModelArchitecture LLAMA_70B = ModelArchitecture.lookup("meta-llama/Llama-2-70b-hf");
    private static final ModelArchitecture MIXTRAL = ModelArchitecture.lookup("mistralai/Mixtral-8x7B-v0.1");
    /** Only the data sheet: no overheads, peak rates. */
    private static final RooflineCoefficients PEAK = new RooflineCoefficients("peak", 0, 0, 0, 1, 1, 1, 1, 0, 1, 0);

    @TempDir
    Path dir;

    private static double us(final ModelArchitecture model, final int tp, final RooflineCoefficients c,
        final StepShape step)
    {
        return new RooflineStepModel(model, H100, tp, c).stepDurationNs(step, RANDOM) / 1000.0;
    }

    @Test
    void aDecodeStepReadsTheWeightsOnceAndTheKvOfItsContext()
    {
        // 32 x (4096 x 128 x (2 x 32 + 2 x 32) + 3 x 4096 x 11008) + 4096 x 32000 weights, 2 bytes each, at 3.35 TB/s
        final double weightsUs = 2.0 * (32 * (4096.0 * 128 * 128 + 3.0 * 4096 * 11008) + 4096.0 * 32000) / 3.35e12 *
            1e6;
        assertEquals(3945, weightsUs, 1);
        assertEquals(weightsUs, us(LLAMA_7B, 1, PEAK, new FixedStepShape(1, 0, 0, 0, 1, 0)), 0.01);
        // 1000 tokens of context: 2 x 32 layers x 32 heads x 128 x 2 bytes each
        final double kvUs = 1000 * 524_288 / 3.35e12 * 1e6;
        assertEquals(weightsUs + kvUs, us(LLAMA_7B, 1, PEAK, new FixedStepShape(1, 0, 0, 1000, 1, 0)), 0.01);
        // overheads add per step, per layer and per request
        final RooflineCoefficients overheads = new RooflineCoefficients("o", 100, 10, 5, 1, 1, 1, 1, 0, 1, 0);
        assertEquals(weightsUs + 100 + 320 + 2 * 5, us(LLAMA_7B, 1, overheads, new FixedStepShape(2, 0, 0, 0, 2)),
            0.01);
    }

    @Test
    void tensorParallelismSplitsTheWorkAndAddsTwoAllReducesPerLayer()
    {
        final FixedStepShape decode = new FixedStepShape(1, 0, 0, 80_000, 1, 0);
        final RooflineCoefficients latency = new RooflineCoefficients("l", 0, 0, 0, 1, 1, 1, 1, 10, 1, 0);
        final double tp1 = us(LLAMA_70B, 1, PEAK, decode);
        final double tp4 = us(LLAMA_70B, 4, latency, decode);
        // 160 all-reduces of 10 us, and 2 x 3/4 x 8192 x 2 bytes each over 450 GB/s
        final double allReduceUs = 160 * (10 + 1.5 * 8192 * 2 / 450e9 * 1e6);
        assertEquals(tp1 / 4 + allReduceUs, tp4, 0.01);
        // 8 KV heads: on 16 GPUs each keeps a whole head, so the KV time stops shrinking at 8
        final FixedStepShape empty = new FixedStepShape(1, 0, 0, 0, 1);
        final double kvAt8 = us(LLAMA_70B, 8, PEAK, decode) - us(LLAMA_70B, 8, PEAK, empty);
        final double kvAt16 = us(LLAMA_70B, 16, PEAK, decode) - us(LLAMA_70B, 16, PEAK, empty);
        assertEquals(kvAt8, kvAt16, 1e-6);
    }

    @Test
    void aMixtureOfExpertsReadsTheExpertsItsTokensTouch()
    {
        final double one = us(MIXTRAL, 1, PEAK, new FixedStepShape(1, 0, 0, 0, 1, 0));
        final double many = us(MIXTRAL, 1, PEAK, new FixedStepShape(64, 0, 0, 0, 64, 0));
        final double expertUs = 2.0 * 32 * 3 * 4096 * 14336 / 3.35e12 * 1e6;
        // one token touches 2 of 8 experts; 64 tokens touch all but 8 x 0.75^64 of them
        assertEquals(6 * expertUs, many - one - 0, expertUs * 0.01 + 1);
    }

    @Test
    void speculativeDraftsRunThroughTheModel()
    {
        final FixedStepShape plain = new FixedStepShape(1, 0, 0, 0, 1, 0);
        final StepShape drafts = new FixedStepShape(1, 0, 0, 0, 1, 0, 4);
        // one token touches 2 of 8 experts, the token and its 3 drafts 8 x (1 - 0.75^4)
        final double expertUs = 2.0 * 32 * 3 * 4096 * 14336 / 3.35e12 * 1e6;
        assertEquals(8 * (1 - Math.pow(0.75, 4)) - 2, (us(MIXTRAL, 1, PEAK, drafts) - us(MIXTRAL, 1, PEAK, plain)) /
            expertUs, 1e-6);
    }

    @Test
    void aLongPrefillIsComputeBound()
    {
        // 2048 new tokens: 2 x 6.48e9 active weights x 2048 + attention over 2048 x 2049 / 2 pairs, at 989 TFLOP/s
        final long pairs = 2048L * 2049 / 2;
        final double computeUs = (2.0 * 32 * (4096.0 * 128 * 128 + 3.0 * 4096 * 11008) * 2048 +
            2.0 * 4096 * 32000 + 4.0 * 32 * 32 * 128 * pairs) / 989e12 * 1e6;
        assertEquals(computeUs, us(LLAMA_7B, 1, PEAK, new FixedStepShape(0, 2048, 1, 0, 1, pairs)), 0.01);
        assertTrue(computeUs > 5 * 3945, "well past the weights' read time: " + computeUs);
    }

    @Test
    void theTermsTimesTheCoefficientsAreTheDuration()
    {
        final RooflineCoefficients c = new RooflineCoefficients("c", 150, 11, 3, 1.2, 1.3, 1.1, 1.4, 2.5, 1.25, 0);
        final FixedStepShape[] steps = {new FixedStepShape(40, 300, 2, 30_000, 42, 300L * 700),
            new FixedStepShape(1, 2048, 1, 500, 2, 2_000_000),
            new FixedStepShape(120, 0, 0, 100_000, 120, 0)};
        for (final ModelArchitecture model : new ModelArchitecture[] {LLAMA_7B, LLAMA_70B, MIXTRAL})
        {
            for (final FixedStepShape step : steps)
            {
                final RooflineStepModel physics = new RooflineStepModel(model, H100, 2, c);
                final double[] terms = new double[RooflineStepModel.TERMS];
                physics.terms(step, terms);
                final double[] values = c.values();
                double sum = 0;
                for (int k = 0; k < terms.length; k++)
                {
                    sum += terms[k] * values[k];
                }
                assertEquals(physics.stepDurationNs(step, RANDOM) / 1000.0, sum, 0.01, model.name() + " " + step);
            }
        }
    }

    @Test
    void theCatalogsAndAConfigJsonGiveTheArchitecture() throws IOException
    {
        assertEquals("H200", GpuSpec.lookup("h200").name());
        assertEquals("RTX-PRO-6000", GpuSpec.lookup("rtx pro 6000").name());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> GpuSpec.lookup("TPU")).getMessage()
            .contains("known: H100, H200"));
        assertEquals(LLAMA_70B, ModelArchitecture.lookup("/models/Llama-2-70b-chat-hf"));
        assertNull(ModelArchitecture.lookup("acme/unknown"));
        final Path config = dir.resolve("config.json");
        Files.writeString(config, "{\"hidden_size\":4096,\"num_attention_heads\":32,\"num_key_value_heads\":8," +
            "\"num_hidden_layers\":32,\"intermediate_size\":14336,\"vocab_size\":32000,\"num_local_experts\":8," +
            "\"num_experts_per_tok\":2,\"tie_word_embeddings\":false}");
        final ModelArchitecture read = ModelArchitecture.read(config);
        assertEquals(dir.getFileName().toString(), read.name());
        assertEquals(MIXTRAL.activeParametersPerLayer(), read.activeParametersPerLayer());
        // the dimensions count the published 46.7 B parameters within the norms' few
        assertEquals(MIXTRAL.parameters(), read.parameters(), 1e6);
        Files.writeString(config, "{\"hidden_size\":4096}");
        assertTrue(assertThrows(IOException.class, () -> ModelArchitecture.read(config)).getMessage()
            .endsWith("config.json has no numeric num_attention_heads"));
    }
}
