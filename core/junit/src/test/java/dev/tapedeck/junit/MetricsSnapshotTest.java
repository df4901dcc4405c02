package dev.tapedeck.junit;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MetricsSnapshotTest
{
    private static final String EXPOSITION = String.join("\n",
        "# HELP vllm:request_success_total Count of successfully processed requests.",
        "# TYPE vllm:request_success_total counter",
        "vllm:request_success_total{engine=\"0\",finished_reason=\"length\",model_name=\"m\"} 3.0",
        "vllm:request_success_total{engine=\"0\",finished_reason=\"stop\",model_name=\"m\"} 2.0",
        "vllm:request_success_total_other 100",
        "vllm:ttft_bucket{le=\"+Inf\",model_name=\"a b\"} 7 1700000000000",
        "process_start_time_seconds 1.7e9",
        "odd_value NaN",
        "");

    @Test
    void shouldReadSamplesWithAndWithoutLabels()
    {
        final MetricsSnapshot snapshot = MetricsSnapshot.parse(EXPOSITION);
        assertEquals(6, snapshot.samples().size());
        assertEquals(2.0, snapshot.value("vllm:request_success_total{engine=\"0\",finished_reason=\"stop\"," +
            "model_name=\"m\"}").getAsDouble());
        assertEquals(1.7e9, snapshot.value("process_start_time_seconds").getAsDouble());
        assertEquals(7.0, snapshot.value("vllm:ttft_bucket{le=\"+Inf\",model_name=\"a b\"}").getAsDouble(),
            "a space inside a label value and a trailing timestamp");
        assertTrue(Double.isNaN(snapshot.value("odd_value").getAsDouble()));
        assertTrue(snapshot.value("absent").isEmpty());
    }

    @Test
    void shouldSumEveryLabelSetOfOneNameOnly()
    {
        final MetricsSnapshot snapshot = MetricsSnapshot.parse(EXPOSITION);
        assertEquals(5.0, snapshot.sum("vllm:request_success_total"), "not the _other metric");
        assertEquals(0.0, snapshot.sum("vllm:absent"));
    }

    @Test
    void shouldNameTheLineThatIsNotASample()
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> MetricsSnapshot.parse("ok 1\nbroken_line_without_value\n"));
        assertEquals("line 2 is not a sample: broken_line_without_value", ex.getMessage());
        final IllegalArgumentException notNumber = assertThrows(IllegalArgumentException.class,
            () -> MetricsSnapshot.parse("a{x=\"1\"} many"));
        assertTrue(notNumber.getMessage().startsWith("line 1 has no number"), notNumber.getMessage());
    }
}
