package dev.tapedeck.enginecore;

import dev.tapedeck.lora.LoraAdapter;
import dev.tapedeck.lora.LoraTable;
import dev.tapedeck.protocol.enginecore.UtilityCall;
import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.ValueType;

/**
 * Answers the frontend's utility calls so it boots and runs: {@code get_supported_tasks}, {@code reset_mm_cache},
 * {@code reset_encoder_cache}, {@code reset_prefix_cache}, {@code add_lora}, {@code remove_lora}, {@code list_loras},
 * {@code pin_lora}, {@code profile}, {@code execute_dummy_batch}, {@code collective_rpc}. Anything else fails with
 * vLLM's message format and the engine goes on. The LoRA calls read and change the engine's adapter table, the one
 * requests' {@code lora_request}s are resolved in. The sleep calls are {@link EngineSleep}'s. Confined to the engine's
 * thread.
 */
final class UtilityHandler
{
    /** The outcome of one call: a failure message or a result. */
    record Outcome(String failure, UtilityCall.ResultWriter result)
    {
    }

    private final LoraTable loras;
    private final Runnable resetPrefixCache;

    UtilityHandler(final Runnable resetPrefixCache, final LoraTable loras)
    {
        this.resetPrefixCache = resetPrefixCache;
        this.loras = loras;
    }

    Outcome handle(final UtilityCall call, final boolean idle)
    {
        final String method = call.method();
        switch (method)
        {
            case "get_supported_tasks":
                return ok(w -> w.arrayHeader(1).string("generate"));
            case "reset_mm_cache":
            case "reset_encoder_cache":
            case "profile":
            case "execute_dummy_batch":
                return ok(UtilityCall.NIL);
            case "reset_prefix_cache":
                if (idle)
                {
                    resetPrefixCache.run();
                }
                return ok(w -> w.bool(idle));
            case "add_lora":
                return addLora(call);
            case "remove_lora":
                final boolean removed = loras.remove(firstInt(call));
                return ok(w -> w.bool(removed));
            case "pin_lora":
                final boolean known = null != loras.byId(firstInt(call));
                return ok(w -> w.bool(known));
            case "list_loras":
                final int[] ids = loras.ids();
                return ok(w ->
                {
                    w.arrayHeader(ids.length);
                    for (final int id : ids)
                    {
                        w.int64(id);
                    }
                });
            case "collective_rpc":
                return ok(w -> w.arrayHeader(0));
            default:
                return new Outcome("Call to " + method + " method failed: not supported by tapedeck's simulated " +
                    "engine", null);
        }
    }

    private Outcome addLora(final UtilityCall call)
    {
        final MsgPackReader args = call.arguments();
        if (call.argumentCount() < 1 || ValueType.ARRAY != args.nextType())
        {
            return new Outcome("Call to add_lora method failed: expected a LoRARequest", null);
        }
        final int fields = args.readArrayHeader();
        final String name = fields > 0 ? args.readString() : null;
        final int id = fields > 1 ? args.readInt() : 0;
        final String path = fields > 2 && ValueType.STRING == args.nextType() ? args.readString() : null;
        if (!args.ok() || null == name || name.isEmpty() || id < 1)
        {
            return new Outcome("Call to add_lora method failed: malformed LoRARequest", null);
        }
        loras.register(new LoraAdapter(name, id, path, null));
        return ok(w -> w.bool(true));
    }

    private static int firstInt(final UtilityCall call)
    {
        final MsgPackReader args = call.arguments();
        return call.argumentCount() > 0 && ValueType.INTEGER == args.nextType() ? args.readInt() : -1;
    }

    private static Outcome ok(final UtilityCall.ResultWriter result)
    {
        return new Outcome(null, result);
    }
}
