package dev.tapedeck.http;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.Request;
import dev.tapedeck.engine.SubmitResult;
import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.lora.LoraAdapter;
import dev.tapedeck.structured.OutputPlan;
import dev.tapedeck.tokens.ChatTemplate;

/**
 * Turns a chat or completions HTTP request into engine requests: parse, check the model, tokenize (through the chat
 * template for chat), check the context window and the queue, then submit one engine request per prompt and per
 * {@code n}. Every refusal is an {@link ApiException} with vLLM's status and message; nothing reaches the engine
 * unless all of its requests fit. {@link #prepare} (parse and tokenize) runs on any thread; {@link #submit} is
 * event-loop confined. One per instance.
 */
final class CompletionAdmission
{
    /** Bodies at least this large are parsed and tokenized off the event loop (when an executor is given). */
    static final int OFFLOAD_BODY_BYTES = 16 * 1024;

    private final Instance instance;
    private final RequestParser parser = new RequestParser();
    private final Executor preparer;
    /** Seeds of structured outputs without a request seed: the instance's seed and the arrival order. */
    private final long planSeed;
    private final AtomicLong planSequence = new AtomicLong();

    /**
     * @param instance the instance.
     * @param preparer where large bodies are parsed and tokenized ({@link #OFFLOAD_BODY_BYTES}), or null for the
     *     event loop.
     */
    CompletionAdmission(final Instance instance, final Executor preparer)
    {
        this.instance = instance;
        this.preparer = preparer;
        this.planSeed = SeededRandom.mix(instance.firstEngine().config().seed(), 0x57c7L);
    }

    /**
     * @return true when this request is prepared off the event loop.
     */
    boolean offloads(final FullHttpRequest http)
    {
        return null != preparer && http.content().readableBytes() >= OFFLOAD_BODY_BYTES;
    }

    /**
     * Prepare a request on the preparer and hand the result to {@code then} on {@code loop}. A full preparer refuses
     * the request with 503 (handed to {@code then} the same way).
     */
    void prepareOffLoop(final FullHttpRequest http, final ParsedRequest.Endpoint endpoint, final long arrivalNs,
        final Executor loop, final Consumer<Prepared> then)
    {
        try
        {
            preparer.execute(() ->
            {
                Prepared prepared;
                try
                {
                    prepared = prepare(http, endpoint, arrivalNs);
                }
                catch (final RuntimeException | Error ex)
                {
                    // whatever happens, the connection gets an answer and reads again
                    prepared = new Prepared(null, null, null, new ApiException(
                        HttpResponseStatus.INTERNAL_SERVER_ERROR, "InternalServerError",
                        "could not prepare the request: " + ex, null), arrivalNs);
                }
                final Prepared result = prepared;
                loop.execute(() -> then.accept(result));
            });
        }
        catch (final RejectedExecutionException ex)
        {
            then.accept(new Prepared(null, null, null, new ApiException(HttpResponseStatus.SERVICE_UNAVAILABLE,
                "ServiceUnavailableError", "The server is busy preparing large requests; retry later.", null),
                arrivalNs));
        }
    }

    /**
     * Do {@code work} on the preparer and hand its result to {@code then} on {@code loop}; a failure becomes
     * {@code onFailure}'s result, and a full preparer a 503 (when the result is a response) handed over the same way.
     */
    <T> void offLoop(final java.util.function.Supplier<T> work, final java.util.function.Function<Throwable, T>
        onFailure, final Executor loop, final Consumer<T> then)
    {
        try
        {
            preparer.execute(() ->
            {
                T result;
                try
                {
                    result = work.get();
                }
                catch (final RuntimeException | Error ex)
                {
                    result = onFailure.apply(ex);
                }
                final T answer = result;
                loop.execute(() -> then.accept(answer));
            });
        }
        catch (final RejectedExecutionException ex)
        {
            then.accept(onFailure.apply(ex));
        }
    }

    /**
     * What admission works out from the body alone: the parsed request and its prompts' token ids (or the first
     * refusal met), computed on any thread ({@link #prepare}).
     *
     * @param request the parsed request, or null when the body was refused.
     * @param prompts token ids per prompt, or null when tokenizing was refused.
     * @param echo echo mode's output tokens, or null.
     * @param refusal what refused the request: a parse failure (request null) or a tokenize or context failure,
     *     raised after the model check as before; or null.
     * @param arrivalNs when the request arrived.
     */
    record Prepared(ParsedRequest request, List<int[]> prompts, int[] echo, ApiException refusal, long arrivalNs,
        OutputPlan[] plans, int[][] planTokenIds)
    {
        Prepared(final ParsedRequest request, final List<int[]> prompts, final int[] echo,
            final ApiException refusal, final long arrivalNs)
        {
            this(request, prompts, echo, refusal, arrivalNs, null, null);
        }
    }

    /**
     * Parse and tokenize a request: the heavy part of admission, which touches no engine or connection state, so a
     * large body can be prepared off the event loop. Thread safe.
     *
     * @param http the request (read, not released).
     * @param endpoint chat or completions.
     * @param arrivalNs when it arrived.
     * @return the prepared request, or its refusal.
     */
    Prepared prepare(final FullHttpRequest http, final ParsedRequest.Endpoint endpoint, final long arrivalNs)
    {
        final ParsedRequest request;
        try
        {
            RequestParser.requireUtf8(http.content());
            request = parser.parse(http.content(), endpoint);
        }
        catch (final ApiException ex)
        {
            return new Prepared(null, null, null, ex, arrivalNs);
        }
        catch (final IllegalArgumentException | StackOverflowError ex)
        {
            // a body the parser's helpers cannot take (a malformed earlier tool call, a schema too deep to read)
            return new Prepared(null, null, null, unreadable(ex), arrivalNs);
        }
        try
        {
            checkLogprobs(request.logprobs, instance.options().api().maxLogprobs(),
                instance.tokenizer().vocabulary().size());
            final List<int[]> prompts = tokenize(request);
            checkContext(request, prompts, instance.firstEngine().config().maxModelLen());
            final int[] echo = ServeOptions.Mode.ECHO == instance.options().mode() ? echoTokens(request, prompts) :
                null;
            final OutputPlan[] plans = planOutputs(request, prompts.size());
            int[][] planTokenIds = null;
            if (null != plans)
            {
                planTokenIds = new int[plans.length][];
                for (int i = 0; i < plans.length; i++)
                {
                    if (null != plans[i])
                    {
                        planTokenIds[i] = tokenizePlan(plans[i]);
                        plans[i] = plans[i].atDecodedOffsets(decodedBytes(encodePart(plans[i].before())),
                            decodedBytes(encodePart(plans[i].arguments())));
                    }
                }
            }
            return new Prepared(request, prompts, echo, null, arrivalNs, plans, planTokenIds);
        }
        catch (final ApiException ex)
        {
            return new Prepared(request, null, null, ex, arrivalNs);
        }
        catch (final IllegalArgumentException | StackOverflowError ex)
        {
            // a schema or pattern the samplers cannot draw from
            return new Prepared(request, null, null, unreadable(ex), arrivalNs);
        }
    }

    private static ApiException unreadable(final Throwable ex)
    {
        return ApiException.badRequest(ex instanceof StackOverflowError ? "the request's schemas are nested too " +
            "deeply to draw an output from" : String.valueOf(ex.getMessage()), null);
    }

    /**
     * A structured output's tokens: the text before the call's arguments, the arguments and the text after them,
     * each tokenized on its own, so that the arguments are whole tokens whose decoded bytes the frontend finds by
     * offset whatever the tokenizer adds in decoding (a SentencePiece space, say).
     */
    private int[] tokenizePlan(final OutputPlan plan)
    {
        final int[] before = encodePart(plan.before());
        final int[] arguments = encodePart(plan.arguments());
        final int[] after = encodePart(plan.after());
        final int[] ids = java.util.Arrays.copyOf(before, before.length + arguments.length + after.length);
        System.arraycopy(arguments, 0, ids, before.length, arguments.length);
        System.arraycopy(after, 0, ids, before.length + arguments.length, after.length);
        return ids;
    }

    private int[] encodePart(final String text)
    {
        return text.isEmpty() ? new int[0] : instance.tokenizer().encode(text);
    }

    private int decodedBytes(final int[] ids)
    {
        int bytes = 0;
        for (final int id : ids)
        {
            bytes += instance.tokenizer().vocabulary().bytes(id).length;
        }
        return bytes;
    }

    /**
     * Check the model, the context and the queue, then submit one engine request per prompt and per {@code n}.
     * Event-loop confined.
     *
     * @return the response's stream.
     * @throws ApiException with vLLM's status and message when the request is refused.
     */
    HttpStream submit(
        final Prepared prepared,
        final FullHttpRequest http,
        final ChannelHandlerContext ctx,
        final ChannelHandlerContext wireCtx,
        final HttpStream.Completion owner,
        final ParsedRequest.Endpoint endpoint,
        final boolean keepAlive)
    {
        final ParsedRequest request = prepared.request();
        if (null == request)
        {
            throw prepared.refusal();
        }
        final ServeOptions options = instance.options();
        final HttpFront front = instance.route(http.headers().get(Instance.DATA_PARALLEL_RANK_HEADER));
        final long arrivalNs = front.engineTimeNs(prepared.arrivalNs());
        final Engine engine = front.engine();
        final LoraAdapter lora = null == request.model || options.serves(request.model) ? null :
            instance.loras().byName(request.model);
        if (null != request.model && !options.serves(request.model) && null == lora)
        {
            throw ApiException.modelNotFound(request.model);
        }
        if (null != prepared.refusal())
        {
            throw prepared.refusal();
        }
        request.responseModel = null == lora ? null : lora.name();
        final List<int[]> prompts = prepared.prompts();
        final int children = prompts.size() * request.n;
        if (children > engine.config().maxWaitingQueueLength())
        {
            throw ApiException.badRequest("This request has " + children + " sequences (prompts x n) but the " +
                "waiting queue holds at most " + engine.config().maxWaitingQueueLength() +
                " (max-waiting-queue-length): it can never be admitted.", "n");
        }
        if (engine.numWaiting() + children > engine.config().maxWaitingQueueLength())
        {
            throw new ApiException(HttpResponseStatus.TOO_MANY_REQUESTS, "RateLimitError",
                "The server is at capacity: the waiting queue is full (max-waiting-queue-length=" +
                engine.config().maxWaitingQueueLength() + "). Retry later.", null);
        }
        final String prefix = switch (endpoint)
        {
            case COMPLETIONS -> "cmpl-";
            case GENERATE -> "generate-tokens-";
            case RESPONSES -> "resp_";
            default -> "chatcmpl-";
        };
        final String headerId = http.headers().get("X-Request-Id");
        final String responseId = prefix + (null != headerId ? headerId :
            null != request.requestId ? request.requestId : instance.randomHexId());
        final HttpStream stream = new HttpStream(front, ctx, wireCtx, owner, request, responseId,
            options.epochSeconds(), http.protocolVersion(), keepAlive);
        final int[] echo = prepared.echo();
        final Choice[] choices = new Choice[children];
        int promptTokens = 0;
        for (int p = 0; p < prompts.size(); p++)
        {
            final int[] ids = prompts.get(p);
            promptTokens += ids.length;
            for (int i = 0; i < request.n; i++)
            {
                final int index = p * request.n + i;
                final Request engineRequest = new Request(responseId + "-" + index, ids)
                    .maxTokens(request.maxTokens)
                    .minTokens(request.minTokens)
                    .ignoreEos(request.ignoreEos)
                    .stopTokenIds(request.stopTokenIds)
                    .priority(request.priority)
                    .cacheSalt(request.cacheSalt)
                    .media(request.mediaSpans)
                    .lora(lora)
                    .fixedOutput(fixedOutput(prepared, index, echo, ids), null != prepared.plans() &&
                        null != prepared.plans()[index])
                    .parallelN(0 == i ? request.n : 0)
                    .firstSibling(0 == i ? null : choices[p * request.n].request)
                    .kvTransferParams(request.kvTransferParams)
                    .arrivalNs(arrivalNs);
                if (request.seeded)
                {
                    engineRequest.seed(request.seed + index);
                }
                choices[index] = new Choice(stream, index, engineRequest, request.stop,
                    request.includeStopStrInOutput, 0 == i, null == prepared.plans() ? null : prepared.plans()[index]);
                engineRequest.attachment(choices[index]);
            }
        }
        stream.choices = choices;
        stream.unfinished = children;
        stream.promptTokens = promptTokens;
        final double threshold = request.cacheHitThreshold >= 0 ? request.cacheHitThreshold :
            options.api().globalCacheHitThreshold();
        submitChoices(engine, stream, threshold, "true".equalsIgnoreCase(http.headers().get(
            "X-Cache-Threshold-Finish-Reason")), arrivalNs);
        return stream;
    }

    /**
     * Submit every choice to the engine, except those whose prefix-cache hit rate is below llm-d's cache-hit
     * threshold (or all, with {@code X-Cache-Threshold-Finish-Reason: true}): they finish at once, without running.
     */
    private static void submitChoices(final Engine engine, final HttpStream stream, final double threshold,
        final boolean forced, final long arrivalNs)
    {
        final Choice[] choices = stream.choices;
        for (final Choice choice : choices)
        {
            if (forced || (threshold > 0 && engine.cachedPromptTokens(choice.request) <
                threshold * choice.request.promptLength()))
            {
                // llm-d's cache-hit threshold: finished at once, without running
                choice.request.refuse(dev.tapedeck.engine.FinishReason.STOP, arrivalNs);
                choice.belowCacheThreshold = true;
                choice.finish(dev.tapedeck.engine.FinishReason.STOP);
                stream.onChoiceFinished();
                continue;
            }
            final SubmitResult result = engine.submit(choice.request, arrivalNs);
            if (SubmitResult.ACCEPTED != result)
            {
                // cannot happen after the checks above on this thread, but never leave a partial response behind
                for (final Choice submitted : choices)
                {
                    engine.abort(submitted.request, dev.tapedeck.engine.FinishReason.ABORT, arrivalNs);
                }
                throw refusal(result);
            }
        }
    }

    /**
     * @return the choice's fixed output: its structured output's tokens, else echo mode's, else null.
     */
    private static int[] fixedOutput(final Prepared prepared, final int index, final int[] echo, final int[] prompt)
    {
        if (null != prepared.planTokenIds() && null != prepared.planTokenIds()[index])
        {
            return prepared.planTokenIds()[index];
        }
        return null == echo ? null : echo.length > 0 ? echo : prompt;
    }

    /**
     * @return the request parser (stateless).
     */
    RequestParser parser()
    {
        return parser;
    }

    /**
     * @param request a parsed completion or chat request.
     * @return its prompts' token ids, the chat template applied to a chat request's messages.
     * @throws ApiException for a token id out of the vocabulary.
     */
    List<int[]> tokenize(final ParsedRequest request)
    {
        final List<int[]> prompts = new ArrayList<>(1);
        if (ParsedRequest.Endpoint.CHAT == request.endpoint.form())
        {
            final String prompt;
            try
            {
                prompt = instance.options().chatTemplate().render(request.messages, request.tools);
            }
            catch (final IllegalArgumentException ex)
            {
                throw ApiException.badRequest(ex.getMessage(), "messages");
            }
            if (request.media.isEmpty())
            {
                prompts.add(instance.tokenizer().encode(prompt));
                return prompts;
            }
            final MediaParts.Tokenized tokenized = request.media.tokenize(prompt, instance.tokenizer(),
                instance.firstEngine().config().maxModelLen());
            request.mediaSpans = tokenized.spans();
            prompts.add(tokenized.ids());
            return prompts;
        }
        final int vocabularySize = instance.tokenizer().vocabulary().size();
        for (final Object prompt : request.prompts)
        {
            if (prompt instanceof String)
            {
                prompts.add(instance.tokenizer().encode((String)prompt));
            }
            else
            {
                final int[] ids = (int[])prompt;
                for (final int id : ids)
                {
                    if (id >= vocabularySize)
                    {
                        throw ApiException.badRequest("Token id " + id + " is out of vocabulary", "prompt");
                    }
                }
                prompts.add(ids);
            }
        }
        return prompts;
    }

    /**
     * Decide each choice's structured output (a tool call, a JSON document, a choice), or null when every choice is
     * free text. Seeded by the request's seed, else by the instance's seed and the request's arrival order.
     */
    private OutputPlan[] planOutputs(final ParsedRequest request, final int promptCount)
    {
        if (null == request.toolCalling && null == request.constraint)
        {
            return null;
        }
        final OutputPlan[] plans = new OutputPlan[promptCount * request.n];
        final long base = request.seeded ? request.seed : SeededRandom.mix(planSeed, planSequence.incrementAndGet());
        boolean any = false;
        for (int i = 0; i < plans.length; i++)
        {
            final SeededRandom random = new SeededRandom(SeededRandom.mix(base, i));
            OutputPlan plan = null;
            if (null != request.toolCalling)
            {
                final ApiSurface api = instance.options().api();
                plan = request.toolCalling.plan(random, api.autoToolCallRate(), api.toolCallParser(),
                    request.afterToolResult, hex(random));
            }
            if (null == plan && null != request.constraint)
            {
                plan = OutputPlan.text(request.constraint.sample(random));
            }
            plans[i] = plan;
            any |= null != plan;
        }
        return any ? plans : null;
    }

    private static String hex(final SeededRandom random)
    {
        return String.format("%016x%016x", random.nextLong(), random.nextLong());
    }

    private int[] echoTokens(final ParsedRequest request, final List<int[]> prompts)
    {
        if (ParsedRequest.Endpoint.CHAT == request.endpoint.form())
        {
            final ChatTemplate.Message last = request.messages.get(request.messages.size() - 1);
            final int[] ids = instance.tokenizer().encode(request.media.withoutMarkers(last.content()));
            return ids.length > 0 ? ids : prompts.get(0);
        }
        return new int[0]; // completions echo each prompt's own tokens
    }

    /**
     * vLLM's {@code --max-logprobs} check (the engine's, with its words); -1 asks for the vocabulary.
     */
    private static void checkLogprobs(final Logprobs.Request logprobs, final int maxLogprobs, final int vocabulary)
    {
        final int max = -1 == maxLogprobs ? vocabulary : maxLogprobs;
        if (logprobs.sampled() && Math.min(logprobs.topLogprobs(), vocabulary) > max)
        {
            final int asked = Integer.MAX_VALUE == logprobs.topLogprobs() ? -1 : logprobs.topLogprobs();
            throw ApiException.badRequest("Requested sample logprobs of " + asked + ", which is greater than max " +
                "allowed: " + max, "logprobs");
        }
        if (logprobs.prompt() && Math.min(logprobs.promptLogprobs(), vocabulary) > max)
        {
            final int asked = Integer.MAX_VALUE == logprobs.promptLogprobs() ? -1 : logprobs.promptLogprobs();
            throw ApiException.badRequest("Requested prompt logprobs of " + asked + ", which is greater than max " +
                "allowed: " + max, "prompt_logprobs");
        }
    }

    private static void checkContext(final ParsedRequest request, final List<int[]> prompts, final int maxModelLen)
    {
        if (Request.UNSET != request.maxTokens && request.maxTokens > maxModelLen)
        {
            throw ApiException.badRequest(request.maxTokensParam + "=" + request.maxTokens +
                " cannot be greater than max_model_len=" + maxModelLen + ". Please request fewer output tokens.",
                request.maxTokensParam);
        }
        for (final int[] prompt : prompts)
        {
            if (0 == prompt.length)
            {
                throw ApiException.badRequest("The prompt is empty: at least one token is required.", "prompt");
            }
            final int output = Request.UNSET == request.maxTokens ? 0 : request.maxTokens;
            if (prompt.length + Math.max(output, 1) > maxModelLen)
            {
                throw ApiException.badRequest("This model's maximum context length is " + maxModelLen +
                    " tokens. However, you requested " + output + " output tokens and your prompt contains " +
                    prompt.length + " input tokens, for a total of " + (prompt.length + output) + " tokens. " +
                    "Please reduce the length of the input prompt or the number of requested output tokens.",
                    "input_tokens");
            }
        }
    }

    private static ApiException refusal(final SubmitResult result)
    {
        switch (result)
        {
            case QUEUE_FULL:
                return new ApiException(HttpResponseStatus.TOO_MANY_REQUESTS, "RateLimitError",
                    "The server is at capacity: the waiting queue is full. Retry later.", null);
            case SHUTTING_DOWN:
                return new ApiException(HttpResponseStatus.SERVICE_UNAVAILABLE, "ServiceUnavailableError",
                    "The server is shutting down.", null);
            case TOO_LONG:
                return ApiException.badRequest("The request does not fit the model's context length.",
                    "input_tokens");
            default:
                return ApiException.badRequest("The request is invalid.", null);
        }
    }
}
