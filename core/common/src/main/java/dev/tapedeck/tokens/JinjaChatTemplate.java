package dev.tapedeck.tokens;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;

/**
 * A model's own chat template (Jinja, as in its {@code tokenizer_config.json}), rendered as Hugging Face's
 * {@code apply_chat_template} renders it for vLLM, so that {@code prompt_tokens} equal vLLM's for that model:
 * {@code trim_blocks} and {@code lstrip_blocks}, strict whitespace control, {@code messages}, {@code tools},
 * {@code add_generation_prompt}, {@code bos_token}/{@code eos_token}, {@code raise_exception},
 * {@code strftime_now}, and a {@code tojson} that writes as Python's {@code json.dumps} ({@link PythonJson}).
 * <p>
 * The engine is HubSpot's Jinjava. Where it departs from Jinja the template is met halfway: Python's string and dict
 * methods ({@code startswith}, {@code split}, {@code strip}, {@code items}, ...) come from {@link PythonMethods},
 * {@code x[::-1]} is read as {@code x|reverse}, and {@code namespace(a=expr)} arguments are parenthesised (Jinjava
 * reads {@code a=x|length - 1} as {@code (a=x|length) - 1}). The tests render Qwen3's and Llama 3's templates and
 * compare with Python's jinja2, byte for byte.
 * <p>
 * Immutable; safe to render from any thread.
 */
public final class JinjaChatTemplate implements PromptTemplate
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Jinjava ENGINE = engine();
    /** The message of a {@code raise_exception} during this thread's render (Jinjava keeps only its own words). */
    private static final ThreadLocal<String> REFUSAL = new ThreadLocal<>();

    private final String template;
    private final String source;
    private final Map<String, Object> specialTokens;

    /**
     * @param template the Jinja source.
     * @param bosToken the tokenizer's {@code bos_token}, or null.
     * @param eosToken the tokenizer's {@code eos_token}, or null.
     * @param source where it came from, for logs.
     */
    public JinjaChatTemplate(final String template, final String bosToken, final String eosToken, final String source)
    {
        this.template = parenthesiseNamespaceArguments(template.replace("[::-1]", "|reverse"));
        this.source = source;
        final Map<String, Object> tokens = new HashMap<>();
        if (null != bosToken)
        {
            tokens.put("bos_token", bosToken);
        }
        if (null != eosToken)
        {
            tokens.put("eos_token", eosToken);
        }
        this.specialTokens = Map.copyOf(tokens);
    }

    /**
     * Read a template: a {@code tokenizer_config.json} (its {@code chat_template}, with its special tokens), or a
     * file of Jinja source ({@code --chat-template FILE}, as vLLM takes it).
     *
     * @param file the file.
     * @return the template.
     * @throws IOException if it cannot be read.
     * @throws IllegalArgumentException (naming the file) when a JSON file has no chat template.
     */
    public static JinjaChatTemplate read(final Path file) throws IOException
    {
        final String text = Files.readString(file);
        if (!file.getFileName().toString().endsWith(".json"))
        {
            return new JinjaChatTemplate(text, null, null, file.toString());
        }
        final JsonNode config = JSON.readTree(text);
        JsonNode template = config.get("chat_template");
        if (null != template && template.isArray())
        {
            // several named templates: the "default" one, as transformers picks it
            for (final JsonNode named : template)
            {
                if ("default".equals(named.path("name").asText()))
                {
                    template = named.get("template");
                }
            }
        }
        if (null == template || !template.isTextual())
        {
            throw new IllegalArgumentException(file + " has no chat_template");
        }
        return new JinjaChatTemplate(template.asText(), specialToken(config.get("bos_token")),
            specialToken(config.get("eos_token")), file.toString());
    }

    /**
     * @param tokenizerJson a {@code tokenizer.json}.
     * @return the chat template of the {@code tokenizer_config.json} beside it, or null when there is none.
     * @throws IOException if it exists but cannot be read.
     */
    public static JinjaChatTemplate besideTokenizer(final Path tokenizerJson) throws IOException
    {
        final Path config = tokenizerJson.toAbsolutePath().resolveSibling("tokenizer_config.json");
        if (!Files.isRegularFile(config) || !JSON.readTree(config.toFile()).has("chat_template"))
        {
            return null;
        }
        return read(config);
    }

    private static String specialToken(final JsonNode node)
    {
        if (null == node || node.isNull())
        {
            return null;
        }
        return node.isTextual() ? node.asText() : node.path("content").asText(null);
    }

    @Override
    public String displayName()
    {
        return "Jinja from " + source;
    }

    @Override
    public String render(final List<ChatTemplate.Message> messages, final List<Map<String, Object>> tools)
    {
        final Map<String, Object> context = new HashMap<>(specialTokens);
        final List<Map<String, Object>> shown = new ArrayList<>(messages.size());
        for (final ChatTemplate.Message message : messages)
        {
            final Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("role", message.role());
            fields.put("content", message.content());
            if (!message.toolCalls().isEmpty())
            {
                fields.put("tool_calls", message.toolCalls());
            }
            if (null != message.toolCallId())
            {
                fields.put("tool_call_id", message.toolCallId());
            }
            shown.add(fields);
        }
        context.put("messages", shown);
        if (!tools.isEmpty())
        {
            context.put("tools", tools);
        }
        context.put("add_generation_prompt", true);
        REFUSAL.remove();
        final RenderResult result = ENGINE.renderForResult(template, context);
        final String refusal = REFUSAL.get();
        if (null != refusal)
        {
            REFUSAL.remove();
            throw new IllegalArgumentException(refusal);
        }
        for (final TemplateError error : result.getErrors())
        {
            if (TemplateError.ErrorType.FATAL == error.getSeverity())
            {
                throw new IllegalArgumentException("the chat template (" + source + ") failed at line " +
                    error.getLineno() + ": " + error.getMessage());
            }
        }
        return result.getOutput();
    }

    /**
     * {@code raise_exception(message)}: the template refuses the conversation.
     *
     * @param message the template's words.
     */
    public static void raiseException(final String message)
    {
        REFUSAL.set(message);
        throw new IllegalArgumentException(message);
    }

    /**
     * {@code strftime_now(format)} for the formats chat templates use ({@code %d %b %Y} and kin).
     *
     * @param format a C {@code strftime} format.
     * @return today's date in it.
     */
    public static String strftimeNow(final String format)
    {
        final java.time.LocalDateTime now = java.time.LocalDateTime.now();
        final StringBuilder out = new StringBuilder();
        for (int i = 0; i < format.length(); i++)
        {
            final char c = format.charAt(i);
            if ('%' != c || i + 1 == format.length())
            {
                out.append(c);
                continue;
            }
            final char directive = format.charAt(++i);
            final String pattern = switch (directive)
            {
                case 'd' -> "dd";
                case 'b' -> "MMM";
                case 'B' -> "MMMM";
                case 'Y' -> "yyyy";
                case 'y' -> "yy";
                case 'm' -> "MM";
                case 'H' -> "HH";
                case 'M' -> "mm";
                case 'S' -> "ss";
                case 'A' -> "EEEE";
                case 'a' -> "EEE";
                case 'j' -> "DDD";
                default -> null;
            };
            if (null == pattern)
            {
                out.append('%').append(directive); // as Python leaves an unknown directive
            }
            else
            {
                out.append(now.format(DateTimeFormatter.ofPattern(pattern, Locale.ENGLISH)));
            }
        }
        return out.toString();
    }

    /**
     * Jinjava reads {@code namespace(a=x|length - 1)} as {@code namespace((a=x|length) - 1)}: put each named
     * argument's value in parentheses.
     */
    static String parenthesiseNamespaceArguments(final String template)
    {
        final StringBuilder out = new StringBuilder(template.length() + 16);
        int from = 0;
        for (int at = template.indexOf("namespace(", from); at >= 0; at = template.indexOf("namespace(", from))
        {
            final int open = at + "namespace(".length();
            final List<String> arguments = argumentsOf(template, open);
            if (null == arguments)
            {
                // unbalanced (in a comment or a string): this one is left as it is, the next ones are read
                out.append(template, from, open);
                from = open;
                continue;
            }
            out.append(template, from, open);
            int end = open;
            for (int k = 0; k < arguments.size(); k++)
            {
                final String argument = arguments.get(k);
                end += argument.length() + 1;
                final int equals = argument.indexOf('=');
                out.append(k > 0 ? "," : "");
                final boolean named = equals > 0 && equals + 1 < argument.length() &&
                    '=' != argument.charAt(equals + 1);
                out.append(named ? argument.substring(0, equals + 1) + "(" + argument.substring(equals + 1) + ")" :
                    argument);
            }
            out.append(')');
            from = end;
        }
        return out.append(template.substring(from)).toString();
    }

    /**
     * @return the top-level comma-separated arguments of the call whose parenthesis opened just before
     *     {@code open}, or null when its brackets do not balance.
     */
    private static List<String> argumentsOf(final String template, final int open)
    {
        final List<String> arguments = new ArrayList<>();
        final StringBuilder closers = new StringBuilder(")");
        int start = open;
        char quote = 0;
        for (int i = open; i < template.length(); i++)
        {
            final char ch = template.charAt(i);
            if (0 != quote)
            {
                quote = ch == quote ? 0 : quote;
            }
            else if ('\'' == ch || '"' == ch)
            {
                quote = ch;
            }
            else if ('(' == ch || '[' == ch || '{' == ch)
            {
                closers.append('(' == ch ? ')' : '[' == ch ? ']' : '}');
            }
            else if (')' == ch || ']' == ch || '}' == ch)
            {
                if (ch != closers.charAt(closers.length() - 1))
                {
                    return null;
                }
                closers.setLength(closers.length() - 1);
                if (closers.isEmpty())
                {
                    arguments.add(template.substring(start, i));
                    return arguments;
                }
            }
            else if (',' == ch && 1 == closers.length())
            {
                arguments.add(template.substring(start, i));
                start = i + 1;
            }
        }
        return null;
    }

    private static Jinjava engine()
    {
        final Jinjava jinjava = new Jinjava(JinjavaConfig.newBuilder()
            .withTrimBlocks(true)
            .withLstripBlocks(true)
            .withElResolver(new PythonMethods(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY))
            .withLegacyOverrides(LegacyOverrides.newBuilder()
                .withParseWhitespaceControlStrictly(true)
                .withUseTrimmingForNotesAndExpressions(true)
                .withUseNaturalOperatorPrecedence(true)
                .withUsePyishObjectMapper(true)
                .withKeepNullableLoopValues(true)
                .withAllowAdjacentTextNodes(true)
                .build())
            .build());
        try
        {
            jinjava.getGlobalContext().registerFunction(new ELFunctionDefinition("", "raise_exception",
                JinjaChatTemplate.class.getMethod("raiseException", String.class)));
            jinjava.getGlobalContext().registerFunction(new ELFunctionDefinition("", "strftime_now",
                JinjaChatTemplate.class.getMethod("strftimeNow", String.class)));
        }
        catch (final NoSuchMethodException ex)
        {
            throw new IllegalStateException(ex);
        }
        jinjava.getGlobalContext().registerFilter(new Filter()
        {
            @Override
            public String getName()
            {
                return "tojson";
            }

            @Override
            public Object filter(final Object value, final JinjavaInterpreter interpreter, final String... args)
            {
                final String indent = args.length > 0 && null != args[0] ? args[0].replace("indent=", "").trim() :
                    "";
                return PythonJson.dumps(value, indent.isEmpty() ? -1 : Integer.parseInt(indent));
            }
        });
        return jinjava;
    }
}
