package dev.tapedeck.enginecore;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.msgpack.value.MapValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.kvtransfer.KvTransferSettings;
import dev.tapedeck.nixl.KvBridgeNative;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * P/D through the engine-core protocol, as a real vLLM frontend drives two {@code play} engines: the prefill gets
 * {@code extra_args.kv_transfer_params = {do_remote_decode: true}} in its {@code EngineCoreRequest} and returns
 * vLLM's params (a msgpack map) in its finishing {@code EngineCoreOutput}; the decode gets those params, pulls the
 * blocks from the prefill engine (over the side channel and the data plane) and reports the pulled tokens in
 * {@code prefill_stats.num_external_cached_tokens}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PlayPrefillDecodeIT
{
    @ParameterizedTest
    @ValueSource(strings = {"noop", "tcp", "ucx"})
    void aPrefillEngineAnswersWithParamsAndADecodeEnginePullsItsBlocks(final String plane) throws Exception
    {
        assumeTrue(!"ucx".equals(plane) || KvBridgeNative.available(),
            () -> "the ucx plane needs libucx (apt-get install libucx-dev): " + KvBridgeNative.unavailableReason());
        final KvTransferSettings settings = new KvTransferSettings("kv_both", "play-" + plane, "127.0.0.1", 0,
            plane, KvTransferSettings.DEFAULT_SHAPE, 4096, 0, 64L << 20, true, false, true, 480_000_000_000L, 5_000,
            1_000_000, 25e9, 0);
        Play server = null;
        try (TestFrontend frontend = new TestFrontend(1))
        {
            server = Play.start(new PlayContext().handshakeAddress(frontend.handshakeAddress).engineCount(2)
                .handshakeTimeoutNs(20_000_000_000L).shutdownTimeoutNs(0).kvTransfer(settings, "test-model")
                .engine(new EngineConfig().maxModelLen(4096).kvCacheBlocks(1024).latencyModel(
                    new StepLatencyModel(new StepCoefficients("test", 1000, 0.5, 5, 0, 0, "test")))));
            frontend.awaitEngines(2);
            final int[] prompt = new int[70];
            for (int i = 0; i < prompt.length; i++)
            {
                prompt[i] = 7000 + i;
            }
            frontend.send(0, 0, (byte)0, TestFrontend.addPayload("prefill-req", prompt, 1, 0, new int[0], false,
                ValueFactory.newNil(), ValueFactory.newMap(ValueFactory.newString("do_remote_decode"),
                    ValueFactory.newBoolean(true))));
            final Value params = finishingOutput(frontend, "prefill-req").kvTransferParams();
            final MapValue map = params.asMapValue();
            assertTrue(TestFrontend.get(map, "do_remote_prefill").asBooleanValue().getBoolean());
            assertEquals("play-" + plane, TestFrontend.get(map, "remote_engine_id").asStringValue().asString());
            assertEquals("prefill-req", TestFrontend.get(map, "remote_request_id").asStringValue().asString());
            assertEquals(4, TestFrontend.get(map, "remote_block_ids").asArrayValue().size(),
                "70 tokens: 4 full blocks of 16");
            assertTrue(TestFrontend.get(map, "remote_port").isIntegerValue());

            frontend.send(1, 0, (byte)0, TestFrontend.addPayload("decode-req", prompt, 3, 0, new int[0], true,
                ValueFactory.newNil(), params));
            long external = -1;
            int tokens = 0;
            while (true)
            {
                final TestFrontend.Outputs outputs = frontend.next(0);
                assertNotNull(outputs, "outputs of the decode");
                for (final TestFrontend.Output output : outputs.outputs())
                {
                    if (!"decode-req".equals(output.requestId()))
                    {
                        continue;
                    }
                    tokens += output.tokens().size();
                    if (null != output.tail() && output.tail().isMapValue())
                    {
                        external = TestFrontend.get(output.tail().asMapValue(), "num_external_cached_tokens")
                            .asIntegerValue().toLong();
                        assertEquals(64, TestFrontend.get(output.tail().asMapValue(), "num_cached_tokens")
                            .asIntegerValue().toLong());
                    }
                    if (null != output.finishReason())
                    {
                        assertEquals(1, output.finishReason(), "length");
                        assertTrue(output.kvTransferParams().isNilValue(), "a decode returns no params");
                        assertEquals(3, tokens);
                        assertEquals(64, external, "the full blocks were pulled; the last 6 tokens computed");
                        return;
                    }
                }
            }
        }
        finally
        {
            if (null != server)
            {
                server.close();
            }
        }
    }

    private static TestFrontend.Output finishingOutput(final TestFrontend frontend, final String requestId)
        throws Exception
    {
        while (true)
        {
            final TestFrontend.Outputs outputs = frontend.next(0);
            assertNotNull(outputs, "outputs of " + requestId);
            for (final TestFrontend.Output output : outputs.outputs())
            {
                if (requestId.equals(output.requestId()) && null != output.finishReason())
                {
                    return output;
                }
            }
        }
    }
}
