package dev.tapedeck.protocol.enginecore;

import org.agrona.DirectBuffer;

import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.MsgPackWriter;

/**
 * A utility call from the frontend ({@code [client_index, call_id, method, args]}) and its reply
 * ({@code EngineCoreOutputs} with {@code utility_output = [call_id, failure_message, [nil, result]]}). The call id is
 * an unsigned 64-bit value and is echoed bit for bit. Utility calls are rare; this class allocates freely.
 * Not thread safe.
 */
public final class UtilityCall
{
    /** Writes a call's result value. */
    @FunctionalInterface
    public interface ResultWriter
    {
        /**
         * @param writer where the result value goes (exactly one value).
         */
        void write(MsgPackWriter writer);
    }

    /** Writes nil (for calls returning None). */
    public static final ResultWriter NIL = MsgPackWriter::nil;

    private final MsgPackReader reader = new MsgPackReader();
    private int clientIndex;
    private long callId;
    private String method;
    private int argsOffset;
    private int argsCount;
    private DirectBuffer source;

    /**
     * @param buffer the UTILITY payload frame.
     * @param offset first byte.
     * @param length bytes.
     * @return true if the call was readable.
     */
    public boolean decode(final DirectBuffer buffer, final int offset, final int length)
    {
        source = buffer;
        reader.wrap(buffer, offset, length);
        final int fields = reader.readArrayHeader();
        if (fields < 4)
        {
            return false;
        }
        clientIndex = reader.readInt();
        callId = reader.readUnsignedBits();
        method = reader.readString();
        argsOffset = reader.position();
        argsCount = reader.readArrayHeader();
        return reader.ok() && null != method;
    }

    /**
     * @return the client whose output socket gets the reply.
     */
    public int clientIndex()
    {
        return clientIndex;
    }

    /**
     * @return the call id's bits.
     */
    public long callId()
    {
        return callId;
    }

    /**
     * @return the method name.
     */
    public String method()
    {
        return method;
    }

    /**
     * @return the number of positional arguments.
     */
    public int argumentCount()
    {
        return argsCount;
    }

    /**
     * @return a reader positioned at the first argument (the arguments array's header is consumed).
     */
    public MsgPackReader arguments()
    {
        reader.seek(argsOffset);
        reader.readArrayHeader();
        return reader;
    }

    /**
     * @return the buffer the call was decoded from.
     */
    public DirectBuffer source()
    {
        return source;
    }

    /**
     * Write the reply message.
     *
     * @param writer a writer wrapped at the start of the output buffer.
     * @param engineIndex this engine.
     * @param timestamp engine time in seconds.
     * @param failureMessage null on success, else the failure text the frontend raises.
     * @param result the result value (ignored on failure).
     * @return the message length.
     */
    public int writeReply(final MsgPackWriter writer, final int engineIndex, final double timestamp,
        final String failureMessage, final ResultWriter result)
    {
        return writeReply(writer, engineIndex, timestamp, callId, failureMessage, result);
    }

    /**
     * Write the reply message of a call answered later (the call object may have decoded others since).
     *
     * @param writer a writer wrapped at the start of the output buffer.
     * @param engineIndex this engine.
     * @param timestamp engine time in seconds.
     * @param callId the call's id.
     * @param failureMessage null on success, else the failure text the frontend raises.
     * @param result the result value (ignored on failure).
     * @return the message length.
     */
    public static int writeReply(final MsgPackWriter writer, final int engineIndex, final double timestamp,
        final long callId, final String failureMessage, final ResultWriter result)
    {
        writer.arrayHeader(5).int64(engineIndex).arrayHeader(0).nil().float64(timestamp);
        writer.arrayHeader(3).uint64(callId);
        if (null == failureMessage)
        {
            writer.nil().arrayHeader(2).nil();
            result.write(writer);
        }
        else
        {
            writer.string(failureMessage).nil();
        }
        return writer.length();
    }
}
