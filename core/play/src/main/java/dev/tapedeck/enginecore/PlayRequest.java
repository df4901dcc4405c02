package dev.tapedeck.enginecore;

import java.nio.charset.StandardCharsets;

import dev.tapedeck.engine.Request;
import dev.tapedeck.protocol.enginecore.EngineCoreOutputsEncoder;

/**
 * The engine-core face's state of one request: its wire id (UTF-8, and the head of its outputs, encoded once), its
 * client, and whether its cached-token count was reported. Confined to the engine's thread.
 */
final class PlayRequest
{
    final Request request;
    final byte[] idUtf8;
    /** {@link EngineCoreOutputsEncoder#runningOutputHead} of the id. */
    final byte[] outputHead;
    final int clientIndex;
    boolean cachedReported;
    /** The engine has finished the request ({@link OutputBatcher#onFinished}). */
    boolean finished;
    boolean abortedByFrontend;

    PlayRequest(final Request request, final int clientIndex)
    {
        this.request = request;
        this.idUtf8 = request.requestId().getBytes(StandardCharsets.UTF_8);
        this.outputHead = EngineCoreOutputsEncoder.runningOutputHead(idUtf8);
        this.clientIndex = clientIndex;
    }
}
