package dev.tapedeck.http;

import java.util.List;

import dev.tapedeck.engine.Request;
import dev.tapedeck.tokens.ChatTemplate;

/**
 * The fields of an OpenAI chat or completions request that tapedeck honours, after type checks. Plain data, built
 * by {@link RequestParser} on the event loop and read once when the request is submitted.
 */
final class ParsedRequest
{
    enum Endpoint
    {
        /** {@code /v1/chat/completions}. */
        CHAT,
        /** {@code /v1/completions}. */
        COMPLETIONS,
        /** {@code /v1/responses}: read as a chat request. */
        RESPONSES,
        /** {@code /v1/messages} (Anthropic's API): read as a chat request. */
        MESSAGES,
        /** {@code /inference/v1/generate} (token ids in and out): read as a completions request. */
        GENERATE;

        /**
         * @return the request this endpoint's body is read as: chat or completions.
         */
        Endpoint form()
        {
            return COMPLETIONS == this || GENERATE == this ? COMPLETIONS : CHAT;
        }
    }

    Endpoint endpoint;
    String model;
    String requestId;
    List<ChatTemplate.Message> messages;
    /** Chat's images, audio and videos (markers in the messages' text). */
    final MediaParts media = new MediaParts();
    /** Where the media sit in the tokenized prompt ({@link CompletionAdmission#tokenize}), or null for none. */
    dev.tapedeck.kv.MediaSpans mediaSpans;
    /** Chat's {@code tools} as sent, for the chat template; empty for none. */
    List<java.util.Map<String, Object>> tools = List.of();
    /** Completions prompts: each a {@code String} or an {@code int[]} of token ids. */
    List<Object> prompts;
    boolean stream;
    boolean includeUsage;
    boolean continuousUsageStats;
    int maxTokens = Request.UNSET;
    String maxTokensParam = "max_tokens";
    int minTokens;
    int n = 1;
    boolean ignoreEos;
    List<String> stop = List.of();
    int[] stopTokenIds;
    boolean includeStopStrInOutput;
    boolean seeded;
    long seed;
    int priority;
    /** {@code cache_salt}: only requests with the same salt share prefix-cache blocks; null for none. */
    String cacheSalt;
    /** The model name responses report: the LoRA adapter's when the request names one, else null (the base's). */
    String responseModel;
    boolean echo;
    /** {@code tools} and {@code tool_choice} (chat), or null without tools. */
    dev.tapedeck.structured.ToolCalling toolCalling;
    /** The conversation's last message is a tool's result (the model then answers in text). */
    boolean afterToolResult;
    /** {@code response_format}, {@code structured_outputs} or {@code guided_*}, or null for free text. */
    dev.tapedeck.structured.OutputConstraint constraint;
    /** {@code logprobs}, {@code top_logprobs}, {@code prompt_logprobs}. */
    Logprobs.Request logprobs = Logprobs.Request.NONE;
    /** llm-d's {@code cache_hit_threshold} (0 to 1), or -1 when not given. */
    double cacheHitThreshold = -1;
    /** {@code kv_transfer_params} (P/D disaggregation), or null. */
    dev.tapedeck.engine.KvTransferParams kvTransferParams;
}
