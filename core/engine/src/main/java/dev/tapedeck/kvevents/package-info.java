/**
 * KV-cache events published as vLLM publishes them, for prefix-aware routers. {@link KvEventStager}, the engine's
 * {@link dev.tapedeck.kv.KvEventSink}, stages each step's events as one binary record and hands it over a bounded
 * one-to-one ring; {@link KvEventPublisher}, an Agrona agent, encodes each record as a msgpack {@code KVEventBatch} and
 * sends it on a ZeroMQ PUB socket, with an optional ROUTER that replays recent batches; {@link KvEventPublishers} runs
 * every publisher of a process on one thread; {@link KvEventsSettings} holds one engine's endpoints and format.
 * <p>
 * The engine sees only the {@code KvEventSink}; ZeroMQ is used on the publishers' thread alone.
 * <p>
 * <b>Threading</b>: a stager's sink methods run on its engine's thread and never block (when the ring is full the
 * step's batch is dropped and counted). Every publisher's sockets and duty cycle run on the one
 * {@code tapedeck-kv-events} thread. {@link KvEventPublishers#add} and {@link KvEventPublishers#start()} are called on
 * one thread before publishing begins, {@link KvEventPublishers#close()} from any thread; endpoints and counters may be
 * read from any thread.
 */
package dev.tapedeck.kvevents;
