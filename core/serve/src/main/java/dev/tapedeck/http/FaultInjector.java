package dev.tapedeck.http;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;

import dev.tapedeck.fault.FaultCounters;
import dev.tapedeck.fault.FaultMix;
import dev.tapedeck.fault.FaultSchedule;
import dev.tapedeck.fault.FaultSettings;
import dev.tapedeck.fault.RequestFault;
import dev.tapedeck.latency.SeededRandom;

/**
 * One instance's fault injection: draws the fault of each request (its {@code x-tapedeck-fault} or
 * {@code X-Return-Error} header when allowed, then an active {@code failures} window of the schedule, then
 * {@code --failure-injection-rate}), answers error faults with llm-d-inference-sim's bodies, runs the instance's
 * part of the {@code --fault-schedule} timeline and counts every fault for {@code tapedeck:faults_injected_total}.
 * <p>
 * Confined to the instance's event loop.
 */
final class FaultInjector
{
    /** tapedeck's per-request fault header ({@link RequestFault} grammar), honoured with --allow-fault-headers. */
    static final String FAULT_HEADER = "x-tapedeck-fault";
    /** llm-d-inference-sim's header: answer at once with this HTTP status; honoured with --allow-fault-headers. */
    static final String RETURN_ERROR_HEADER = "X-Return-Error";
    private static final System.Logger LOG = System.getLogger(FaultInjector.class.getName());

    private final Instance instance;
    private final FaultSettings settings;
    private final SeededRandom random;
    private final FaultCounters counters = new FaultCounters();
    /** The schedule's {@code failures} windows in effect, latest last. */
    private final List<FaultMix> windows = new ArrayList<>();
    private int unhealthyWindows;

    FaultInjector(final Instance instance, final FaultSettings settings, final long seed)
    {
        this.instance = instance;
        this.settings = settings;
        this.random = new SeededRandom(SeededRandom.mix(seed, 0xfa17L));
    }

    /**
     * The fault a request gets.
     *
     * @param headers the request's headers.
     * @return the fault, or null.
     * @throws ApiException (400) for a fault header that does not parse.
     */
    RequestFault draw(final HttpHeaders headers)
    {
        if (settings.allowHeaders())
        {
            final String spec = headers.get(FAULT_HEADER);
            if (null != spec)
            {
                try
                {
                    return RequestFault.parse(spec);
                }
                catch (final IllegalArgumentException ex)
                {
                    throw ApiException.badRequest(FAULT_HEADER + ": " + ex.getMessage(), null);
                }
            }
            final String status = headers.get(RETURN_ERROR_HEADER);
            if (null != status)
            {
                try
                {
                    return new RequestFault(RequestFault.Kind.STATUS, Integer.parseInt(status.trim()), 0, 0);
                }
                catch (final IllegalArgumentException ex) // NumberFormatException, or a status outside 400..599
                {
                    throw ApiException.badRequest(RETURN_ERROR_HEADER + " must be an HTTP error status (400 to " +
                        "599), got '" + status + "'", null);
                }
            }
        }
        for (int i = windows.size() - 1; i >= 0; i--)
        {
            final RequestFault fault = windows.get(i).draw(random);
            if (null != fault)
            {
                return fault;
            }
        }
        return settings.mix().draw(random);
    }

    /**
     * Answer an error fault, as llm-d-inference-sim does (its messages, its error types).
     *
     * @param fault an error fault ({@link RequestFault.Kind#isError()}).
     * @return the response.
     */
    FullHttpResponse errorResponse(final RequestFault fault)
    {
        counters.count(fault.kind());
        final String model = instance.options().modelNameForResponses();
        final HttpResponseStatus status = HttpResponseStatus.valueOf(fault.httpStatus());
        final String message;
        String param = null;
        switch (fault.kind())
        {
            case RATE_LIMIT:
                message = "Rate limit reached for " + model + " in organization org-xxx on requests per min (RPM): " +
                    "Limit 3, Used 3, Requested 1.";
                break;
            case INVALID_API_KEY:
                message = "Incorrect API key provided.";
                break;
            case CONTEXT_LENGTH:
                message = "This model's maximum context length is 4096 tokens. However, your messages resulted in " +
                    "4500 tokens.";
                param = "messages";
                break;
            case SERVER_ERROR:
                message = "The server is overloaded or not ready yet.";
                break;
            case INVALID_REQUEST:
                message = "Invalid request: missing required parameter 'model'.";
                param = "model";
                break;
            case MODEL_NOT_FOUND:
                message = "The model '" + model + "-nonexistent' does not exist";
                param = "model";
                break;
            default:
                message = "Injected error: " + fault + " (tapedeck fault injection)";
        }
        return ControlResponses.error(status, errorType(status.code()), message, param);
    }

    /** llm-d-inference-sim's error types, by status (the OpenAI SDK's exception names). */
    private static String errorType(final int status)
    {
        switch (status)
        {
            case 400:
                return "BadRequestError";
            case 401:
                return "AuthenticationError";
            case 403:
                return "PermissionDeniedError";
            case 404:
                return "NotFoundError";
            case 422:
                return "UnprocessableEntityError";
            case 429:
                return "RateLimitError";
            default:
                return status >= 500 ? "InternalServerError" : "APIConnectionError";
        }
    }

    /**
     * @param kind a stream fault struck (reset, stall, first byte, abort).
     */
    void struck(final RequestFault.Kind kind)
    {
        counters.count(kind);
    }

    /**
     * @return false while a schedule says this instance is unhealthy ({@code /health} answers 503).
     */
    boolean healthy()
    {
        return 0 == unhealthyWindows;
    }

    /**
     * Arm this instance's events of the schedule on its event loop.
     *
     * @param runStartNs the start of the run on the face's clock; event times count from it.
     */
    void startSchedule(final long runStartNs)
    {
        for (final FaultSchedule.Event event : settings.schedule().events())
        {
            if (!event.hits(instance.index()))
            {
                continue;
            }
            at(runStartNs + event.atNs(), () -> begin(event));
            if (Long.MAX_VALUE != event.endNs())
            {
                at(runStartNs + event.endNs(), () -> end(event));
            }
        }
    }

    private void at(final long whenNs, final Runnable task)
    {
        final long delayNs = whenNs - instance.nowNs();
        if (delayNs <= 0)
        {
            task.run(); // due already (t=0): in effect before the next request is read
            return;
        }
        instance.loop().schedule(task, delayNs, TimeUnit.NANOSECONDS);
    }

    private void begin(final FaultSchedule.Event event)
    {
        counters.count(event.action());
        LOG.log(System.Logger.Level.INFO, "fault schedule line {0}: instance {1}: {2}{3}", event.line(),
            instance.index(), event.action().label(), Long.MAX_VALUE == event.forNs() ? "" :
            " for " + dev.tapedeck.latency.Durations.format(event.forNs()));
        switch (event.action())
        {
            case UNHEALTHY:
                unhealthyWindows++;
                break;
            case FAILURES:
                windows.add(event.mix());
                break;
            case DOWN:
                instance.goDown();
                break;
            case STALL:
                instance.stall(true);
                break;
            case KV_EVENTS_DROP:
            case KV_EVENTS_DELAY:
                instance.kvEventsFault(event.action(), event.delayNs());
                break;
            default: // die and dead are refused by ServeOptions
                break;
        }
    }

    private void end(final FaultSchedule.Event event)
    {
        LOG.log(System.Logger.Level.INFO, "fault schedule line {0}: instance {1}: {2} over", event.line(),
            instance.index(), event.action().label());
        switch (event.action())
        {
            case UNHEALTHY:
                unhealthyWindows--;
                break;
            case FAILURES:
                windows.remove(event.mix());
                break;
            case DOWN:
                instance.comeBack();
                break;
            case STALL:
                instance.stall(false);
                break;
            case KV_EVENTS_DROP:
            case KV_EVENTS_DELAY:
                instance.kvEventsFault(null, 0);
                break;
            default:
                break;
        }
    }

    /**
     * Append {@code tapedeck:faults_injected_total} to a {@code /metrics} exposition, when fault injection is on.
     *
     * @param out the exposition.
     */
    void writeMetrics(final StringBuilder out)
    {
        if (settings.enabled())
        {
            counters.write(out, instance.options().modelNameForResponses());
        }
    }

    FaultCounters counters()
    {
        return counters;
    }
}
