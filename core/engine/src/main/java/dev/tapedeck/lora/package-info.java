/**
 * LoRA adapters as vLLM names them, without weights: {@link LoraAdapter} (name, {@code lora_int_id}, path, base model),
 * {@link LoraModules}, which parses {@code --lora-modules}, {@link LoraSettings}, the LoRA flags of {@code serve}, and
 * {@link LoraTable}, the adapters a frontend or an engine core knows by name and by id. An adapter changes which prefix
 * blocks a request may share, what its KV events carry and how many distinct adapters one batch may hold
 * ({@code --max-loras}, enforced by the engine's scheduler); nothing else.
 * <p>
 * Depends on nothing else of tapedeck. <b>Threading</b>: {@link LoraAdapter} and {@link LoraSettings} are immutable and
 * {@link LoraModules} stateless, all safe from any thread; a {@link LoraTable} is not thread safe and belongs to one
 * {@code serve} instance (its event loop) or one {@code play} engine (its agent thread).
 */
package dev.tapedeck.lora;
