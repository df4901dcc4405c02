package dev.tapedeck.trace;

import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The v3 configuration fingerprint against the hashes published in vllm-vcr's conformance manifest
 * ({@code conformance/manifest.toml} @4b460a18): Qwen/Qwen3-8B on H200, four vLLM releases, prefix caching on and off.
 */
class ConfigFingerprintTest
{
    private static String engineConfig(final boolean prefixCaching)
    {
        final Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("tensor_parallel", 1);
        settings.put("model", "Qwen/Qwen3-8B");
        settings.put("block_size", 16);
        settings.put("enable_prefix_caching", prefixCaching);
        settings.put("enforce_eager", true);
        settings.put("gpu_memory_utilization", 0.90);
        settings.put("max_model_len", 16384);
        settings.put("max_num_seqs", 256);
        settings.put("speculative", "none");
        return ConfigFingerprint.engineConfig(settings);
    }

    @Test
    void shouldBuildTheCanonicalEngineConfig()
    {
        assertEquals("block_size=16;enable_prefix_caching=true;enforce_eager=true;gpu_memory_utilization=0.9;" +
            "max_model_len=16384;max_num_seqs=256;model=Qwen/Qwen3-8B;speculative=none;tensor_parallel=1",
            engineConfig(true));
    }

    @Test
    void shouldReproduceThePublishedManifestHashes()
    {
        final String[][] vectors = {
            {"v0.24.0", "true", "6877a96ac4bfb8281101baecdccdbc1bb1e2d447f0d0595ffcf2bef1771cbd51"},
            {"v0.24.0", "false", "e4cae396fbb56fb7587526332d2b9078baeadb710345c665c1e3630dc740c1fb"},
            {"v0.25.1", "true", "c74d2e5958ebe152838089bfc134ba615c9f10f113fb9ff034c68cfe7ed1d543"},
            {"v0.25.1", "false", "c7f70be8d426964e035600f31adb13b56f4335c93bbf5b51e63e4da8ae63c86c"},
            {"v0.26.0", "true", "a50876aca900d094a2d58897176c1c96748203743b29a17ce1eb355fccbac84c"},
            {"v0.26.0", "false", "17e60055a625292e67a354084204b1f7f0f3f196ee3d62363113d3de15aa20ec"},
            {"v0.27.1", "true", "008ec925f30d74759b6c62bd5e78b16efb7b450c687554c053726dad9740a9dd"},
            {"v0.27.1", "false", "207648aeb128254e4e0c6d177c428abccd40a306478c04b0b8519a61b9c4ce8e"},
        };
        for (final String[] vector : vectors)
        {
            assertEquals(vector[2], ConfigFingerprint.hash("H200", vector[0],
                engineConfig(Boolean.parseBoolean(vector[1]))), vector[0] + " prefix caching " + vector[1]);
        }
    }

    @Test
    void shouldWriteNumbersAsPythonDoes()
    {
        assertEquals("0.9", ConfigFingerprint.pythonStr(0.90));
        assertEquals("1.0", ConfigFingerprint.pythonStr(1.0));
        assertEquals("0.95", ConfigFingerprint.pythonStr(0.95));
        assertEquals("1e-05", ConfigFingerprint.pythonStr(0.00001));
        assertEquals("1e+16", ConfigFingerprint.pythonStr(1e16));
        assertEquals("12345678.5", ConfigFingerprint.pythonStr(12345678.5));
        assertEquals("16", ConfigFingerprint.pythonStr(16));
        assertEquals("false", ConfigFingerprint.pythonStr(false));
    }
}
