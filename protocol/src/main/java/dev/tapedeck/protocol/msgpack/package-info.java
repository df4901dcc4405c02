/**
 * msgpack on Agrona buffers: {@link MsgPackWriter} and {@link MsgPackReader}, flyweights wrapped anew for every message
 * that allocate nothing for numbers and headers; {@link ValueType}, the type of the next value; and
 * {@link MsgPackCodes}, the format bytes. The reader never throws on malformed input: it records the first error and
 * returns sentinels from then on.
 * <p>
 * Depends on Agrona only. <b>Threading</b>: a reader or a writer is not thread safe and belongs to one thread;
 * {@link MsgPackCodes} and {@link ValueType} hold constants only.
 */
package dev.tapedeck.protocol.msgpack;
