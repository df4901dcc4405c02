package dev.tapedeck.latency;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A step profile file keeps the coefficients, the frontend delay and the provenance it was written with; a file that
 * is not one, or lacks a coefficient, is refused with its name.
 */
class StepProfileFileTest
{
    @TempDir
    Path dir;

    @Test
    void whatIsWrittenIsReadBack() throws IOException
    {
        final StepCoefficients c = new StepCoefficients("mine", 6000.5, 7.25, 120, 5.5, 0.02, "a test");
        final ObjectNode provenance = JsonNodeFactory.instance.objectNode().put("experiments", 3);
        final Path file = dir.resolve("p.json");
        StepProfileFile.write(file, c, 15_577_000L, provenance);
        final StepProfileFile.Loaded loaded = StepProfileFile.read(file);
        assertEquals(c, loaded.coefficients());
        assertEquals(15_577_000L, loaded.frontendDelayNs());
        assertEquals(3, loaded.provenance().path("experiments").asInt());
    }

    @Test
    void aPhysicsProfileIsReadBackWithItsDeployment() throws IOException
    {
        final RooflineProfile mixtral = RooflineProfile.named("mixtral-8x7b-tp2-h100");
        final Path file = dir.resolve("moe.json");
        StepProfileFile.write(file, mixtral.with(mixtral.coefficients().withJitter(0.05)),
            JsonNodeFactory.instance.objectNode().put("rounds", 12));
        final StepProfileFile.Loaded loaded = StepProfileFile.read(file);
        assertEquals(null, loaded.coefficients());
        assertEquals(mixtral.model(), loaded.roofline().model());
        assertEquals(mixtral.gpu(), loaded.roofline().gpu());
        assertEquals(2, loaded.roofline().tensorParallel());
        assertEquals(mixtral.coefficients().withJitter(0.05), loaded.roofline().coefficients());
        assertEquals(mixtral.frontendDelayNs(), loaded.frontendDelayNs());
        assertEquals(12, loaded.provenance().path("rounds").asInt());
        Files.writeString(file, Files.readString(file).replace("\"gpu\" : \"H100\"", "\"gpu\" : \"TPU\""));
        final IOException badGpu = assertThrows(IOException.class, () -> StepProfileFile.read(file));
        assertTrue(badGpu.getMessage().startsWith(file + ": unknown GPU 'TPU'"), badGpu.getMessage());
    }

    @Test
    void aFileThatIsNotAProfileIsRefusedWithItsName() throws IOException
    {
        final Path other = dir.resolve("other.json");
        Files.writeString(other, "{\"schema\":\"tapedeck-load-report/1\"}");
        final IOException notProfile = assertThrows(IOException.class, () -> StepProfileFile.read(other));
        assertTrue(notProfile.getMessage().startsWith(other.toString()), notProfile.getMessage());
        final Path missing = dir.resolve("missing.json");
        Files.writeString(missing, "{\"schema\":\"" + StepProfileFile.SCHEMA + "\",\"name\":\"x\",\"base_us\":1}");
        final IOException noField = assertThrows(IOException.class, () -> StepProfileFile.read(missing));
        assertTrue(noField.getMessage().contains("prefill_token_us"), noField.getMessage());
        final Path broken = dir.resolve("broken.json");
        Files.writeString(broken, "{\"schema\":");
        assertTrue(assertThrows(IOException.class, () -> StepProfileFile.read(broken)).getMessage()
            .contains("not valid JSON"));
    }
}
