package dev.tapedeck.nixl.sidechannel;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CompatibilityHashTest
{
    private static final CompatibilityHash.Inputs BASE = new CompatibilityHash.Inputs("0.11.1", 2, "Qwen/Qwen3-0.6B",
        "torch.bfloat16", 8, 128, 28, "FLASH_ATTN", "auto");

    /** Computed once by hand with Python 3: sha256(json.dumps(factors, sort_keys=True).encode()).hexdigest(). */
    @Test
    void knownAnswer()
    {
        assertEquals("{\"attn_backend_name\": \"FLASH_ATTN\", \"cache_dtype\": \"auto\", " +
            "\"dtype\": \"torch.bfloat16\", " +
            "\"head_size\": 128, \"model\": \"Qwen/Qwen3-0.6B\", \"nixl_connector_version\": 2, " +
            "\"num_hidden_layers\": 28, \"num_kv_heads\": 8, \"vllm_version\": \"0.11.1\"}",
            CompatibilityHash.canonicalJson(BASE));
        assertEquals("fbd74925ff7794b1cb797b9028a6c4aee32edccdc3cbb8b18fecddf7437571ff",
            CompatibilityHash.compute(BASE));
    }

    @Test
    void stableAndSensitiveToEveryInput()
    {
        assertEquals(CompatibilityHash.compute(BASE), CompatibilityHash.compute(new CompatibilityHash.Inputs("0.11.1",
            2, "Qwen/Qwen3-0.6B", "torch.bfloat16", 8, 128, 28, "FLASH_ATTN", "auto")));
        final List<CompatibilityHash.Inputs> variants = List.of(BASE,
            new CompatibilityHash.Inputs("0.11.2", 2, "Qwen/Qwen3-0.6B", "torch.bfloat16", 8, 128, 28, "FLASH_ATTN",
                "auto"),
            new CompatibilityHash.Inputs("0.11.1", 3, "Qwen/Qwen3-0.6B", "torch.bfloat16", 8, 128, 28, "FLASH_ATTN",
                "auto"),
            new CompatibilityHash.Inputs("0.11.1", 2, "Qwen/Qwen3-1.7B", "torch.bfloat16", 8, 128, 28, "FLASH_ATTN",
                "auto"),
            new CompatibilityHash.Inputs("0.11.1", 2, "Qwen/Qwen3-0.6B", "torch.float16", 8, 128, 28, "FLASH_ATTN",
                "auto"),
            new CompatibilityHash.Inputs("0.11.1", 2, "Qwen/Qwen3-0.6B", "torch.bfloat16", 4, 128, 28, "FLASH_ATTN",
                "auto"),
            new CompatibilityHash.Inputs("0.11.1", 2, "Qwen/Qwen3-0.6B", "torch.bfloat16", 8, 64, 28, "FLASH_ATTN",
                "auto"),
            new CompatibilityHash.Inputs("0.11.1", 2, "Qwen/Qwen3-0.6B", "torch.bfloat16", 8, 128, 27, "FLASH_ATTN",
                "auto"),
            new CompatibilityHash.Inputs("0.11.1", 2, "Qwen/Qwen3-0.6B", "torch.bfloat16", 8, 128, 28, "FLASHINFER",
                "auto"),
            new CompatibilityHash.Inputs("0.11.1", 2, "Qwen/Qwen3-0.6B", "torch.bfloat16", 8, 128, 28, "FLASH_ATTN",
                "fp8"));
        final Set<String> hashes = new HashSet<>();
        for (final CompatibilityHash.Inputs inputs : variants)
        {
            final String hash = CompatibilityHash.compute(inputs);
            assertEquals(64, hash.length());
            assertTrue(hashes.add(hash), "same hash for " + inputs);
        }
    }

    /** Python's own json.dumps + hashlib, on inputs that exercise the string escaping. */
    @Test
    void matchesPythonHashlib() throws IOException, InterruptedException
    {
        final CompatibilityHash.Inputs tricky = new CompatibilityHash.Inputs("0.11.1+cu12\u00e9", 2,
            "/models/\"quoted\"\\back\tslash-\u65e5\u672c-\ud83d\ude00\u007f", "torch.float8_e4m3fn", 1, 576, 61,
            "FLASHMLA", "fp8_e4m3");
        for (final CompatibilityHash.Inputs inputs : List.of(BASE, tricky))
        {
            final String python = python(inputs);
            Assumptions.assumeTrue(null != python, "python3 not on PATH; skipped the cross-check");
            assertEquals(python, CompatibilityHash.compute(inputs), inputs.toString());
        }
    }

    private static String python(final CompatibilityHash.Inputs inputs) throws IOException, InterruptedException
    {
        final String script = "import hashlib, json, sys\n" +
            "a = sys.stdin.buffer.read().decode('utf-8').split('\\x00')\n" +
            "f = {'vllm_version': a[0], 'nixl_connector_version': int(a[1]), 'model': a[2], 'dtype': a[3],\n" +
            "     'num_kv_heads': int(a[4]), 'head_size': int(a[5]), 'num_hidden_layers': int(a[6]),\n" +
            "     'attn_backend_name': a[7], 'cache_dtype': a[8]}\n" +
            "print(hashlib.sha256(json.dumps(f, sort_keys=True).encode()).hexdigest())\n";
        final Process process;
        try
        {
            process = new ProcessBuilder("python3", "-c", script).redirectErrorStream(true).start();
        }
        catch (final IOException ex)
        {
            System.out.println("python3 unavailable (" + ex.getMessage() + "); skipping the hashlib cross-check");
            return null;
        }
        final String args = String.join("\u0000", inputs.vllmVersion(), Integer.toString(inputs.connectorVersion()),
            inputs.model(), inputs.dtype(), Integer.toString(inputs.numKvHeads()), Integer.toString(inputs.headSize()),
            Integer.toString(inputs.numHiddenLayers()), inputs.attnBackendName(), inputs.cacheDtype());
        process.getOutputStream().write(args.getBytes(StandardCharsets.UTF_8));
        process.getOutputStream().close();
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "python3 did not finish");
        assertEquals(0, process.exitValue(), out);
        return out;
    }
}
