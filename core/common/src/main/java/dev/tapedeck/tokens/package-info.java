/**
 * Tokenizers and token text: the {@link Tokenizer} interface with OpenAI's o200k_base built in
 * ({@link BuiltinTokenizer}) and any Hugging Face {@code tokenizer.json} ({@link HfTokenizer});
 * {@link TokenVocabulary}, the id-to-bytes table that turns generated ids back into text and holds the ids random
 * output is drawn from; and the {@link ChatTemplate}s that render chat messages into the prompt text that is tokenized.
 * <p>
 * The engine never sees a tokenizer: a face tokenizes prompts itself and hands the engine token ids (a request's
 * prompt; the random and end-of-turn ids through {@code EngineConfig.tokenSpace}). The load generator uses a tokenizer
 * to build prompts of exact token counts. Depends on nothing else of tapedeck (the common module depends on no other,
 * and {@code CommonArchitectureTest} keeps its packages apart).
 * <p>
 * <b>Threading</b>: tokenizers, vocabularies and templates are immutable after construction and safe from any thread
 * (one tokenizer serves every event loop of a {@code serve}); an {@link HfTokenizer} is closed once, at shutdown.
 */
package dev.tapedeck.tokens;
