package dev.tapedeck.latency.fit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.StepCoefficients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shipped step-model profiles are exactly what {@link StepModelFit} derives from the shipped real runs.
 */
class StepModelFitTest
{
    @Test
    void shouldDeriveTheDefaultProfileFromTheRtxPro6000Llama8bRun() throws IOException
    {
        assertReproduces("RTXPRO6000_Llama-3.1-8B", StepCoefficients.DENSE_8B_RTXPRO6000);
    }

    @Test
    void shouldDeriveTheQwen32bProfile() throws IOException
    {
        assertReproduces("RTXPRO6000_Qwen3-32B", StepCoefficients.DENSE_32B_TP2_RTXPRO6000);
    }

    @Test
    void shouldDeriveTheMoeProfile() throws IOException
    {
        assertReproduces("RTXPRO6000_Qwen3-30B-A3B-Instruct-2507", StepCoefficients.MOE_30B_A3B_RTXPRO6000);
    }

    private static void assertReproduces(final String run, final StepCoefficients shipped) throws IOException
    {
        final List<MeasuredRequest> requests = MeasuredRequest.readLlmServingSim(
            FidelityData.llmServingSimRequests(run));
        assertEquals(300, requests.size());
        final StepModelFit.Result fit = StepModelFit.fit(requests, shipped.name(), shipped.source());
        final StepCoefficients c = fit.coefficients();
        assertClose(shipped.baseUs(), c.baseUs());
        assertClose(shipped.prefillTokenUs(), c.prefillTokenUs());
        assertClose(shipped.decodeRequestUs(), c.decodeRequestUs());
        assertClose(shipped.contextKiloTokenUs(), c.contextKiloTokenUs());
        assertTrue(fit.meanAbsolutePercentageError() < 0.02, "fit error " + fit.meanAbsolutePercentageError());
    }

    private static void assertClose(final double expected, final double actual)
    {
        assertEquals(expected, actual, Math.max(1e-3, Math.abs(expected) * 1e-4));
    }

    @Test
    void shouldReportAMalformedLineWithFileAndLineNumber(final @org.junit.jupiter.api.io.TempDir Path dir)
        throws IOException
    {
        final Path file = dir.resolve("requests.jsonl");
        Files.writeString(file, "{\"input_toks\":1,\"output_toks\":2,\"queued_ts\":0,\"scheduled_ts\":0," +
            "\"first_token_ts\":1,\"last_token_ts\":2}\n{\"input_toks\":\"x\"}\n");
        final IOException error = assertThrows(IOException.class, () -> MeasuredRequest.readLlmServingSim(file));
        assertTrue(error.getMessage().startsWith(file + ":2: "), error.getMessage());
    }

    @Test
    void shouldRefuseToFitTooFewRequests()
    {
        final List<MeasuredRequest> few = List.of(new MeasuredRequest(10, 50, 0, 0, 0.1, 1.0));
        assertThrows(IllegalArgumentException.class, () -> StepModelFit.fit(few, "x", "y"));
    }
}
