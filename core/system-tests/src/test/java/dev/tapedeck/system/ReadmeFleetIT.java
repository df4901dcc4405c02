package dev.tapedeck.system;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tapedeck.junit.TapedeckFleet;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The README's embedding example, line for line: if this changes, change the README (and the other way round).
 */
class ReadmeFleetIT
{
    @RegisterExtension
    static TapedeckFleet fleet = TapedeckFleet.builder().instances(4).stepProfile("dense-8b-rtxpro6000").build();

    @Test
    void everyInstanceAnswersAndCountsIt() throws Exception
    {
        HttpClient http = HttpClient.newHttpClient();
        for (int i = 0; i < 4; i++)
        {
            URI base = fleet.baseUrl(i);
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(base.resolve("/v1/completions"))
                .header("content-type", "application/json")
                .POST(BodyPublishers.ofString("{\"model\":\"Qwen/Qwen3-8B\",\"prompt\":\"hi\",\"max_tokens\":8}"))
                .build(), BodyHandlers.ofString());
            assertEquals(200, response.statusCode());
            assertEquals(1.0, fleet.scrapeMetrics(i).sum("vllm:request_success_total"));
        }
    }
}
