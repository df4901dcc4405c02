package dev.tapedeck.trace.tools;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.trace.ConfigFingerprint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code inspect fingerprint --set}: settings in any order and spelling give vllm-vcr's canonical engine
 * configuration and its manifest hash.
 */
class EngineConfigSettingsTest
{
    private static final String CANONICAL = "block_size=16;enable_prefix_caching=true;enforce_eager=true;" +
        "gpu_memory_utilization=0.9;max_model_len=16384;max_num_seqs=256;model=Qwen/Qwen3-8B;speculative=none;" +
        "tensor_parallel=1";

    @Test
    void shouldBuildTheCanonicalConfigurationOfTheManifestVector()
    {
        final String config = EngineConfigSettings.canonical(List.of("tensor_parallel=1", "model=Qwen/Qwen3-8B",
            "max_num_seqs=256", "gpu_memory_utilization=0.90", "enable_prefix_caching=True", "speculative=none",
            "max_model_len=016384", "enforce_eager=true", "block_size=16"));
        assertEquals(CANONICAL, config);
        assertEquals("008ec925f30d74759b6c62bd5e78b16efb7b450c687554c053726dad9740a9dd",
            ConfigFingerprint.hash("H200", "v0.27.1", config));
        assertTrue(EngineConfigSettings.isSorted(CANONICAL));
        assertFalse(EngineConfigSettings.isSorted("model=x;block_size=16"));
    }

    @Test
    void shouldTypeValuesAsTheCaptureScriptsDo()
    {
        assertEquals("a=1000.0;b=-3;c=0.0001;d=1e-05;e=ngram-k4;f=false;g=", EngineConfigSettings.canonical(
            List.of("a=1e3", "b=-3", "c=0.00010", "d=0.00001", "e=ngram-k4", "f=FALSE", "g=")));
    }

    @Test
    void shouldRejectMalformedSettings()
    {
        assertEquals("setting 'block_size' is given twice", assertThrows(IllegalArgumentException.class,
            () -> EngineConfigSettings.canonical(List.of("block_size=16", "block_size=32"))).getMessage());
        assertEquals("setting 'model' is not key=value", assertThrows(IllegalArgumentException.class,
            () -> EngineConfigSettings.canonical(List.of("model"))).getMessage());
        assertEquals("setting 'a=x;b=y': a value must not contain ';'", assertThrows(IllegalArgumentException.class,
            () -> EngineConfigSettings.canonical(List.of("a=x;b=y"))).getMessage());
    }
}
