package dev.tapedeck.tokens;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Renders chat messages into the prompt text that is tokenized, with the generation prompt for the assistant's turn.
 * <ul>
 *   <li>{@code chatml} (default; Qwen, Hermes, many others):
 *       {@code <|im_start|>role\ncontent<|im_end|>\n} per message, then {@code <|im_start|>assistant\n}.</li>
 *   <li>{@code llama3}: {@code <|begin_of_text|>}, then per message
 *       {@code <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>}, then the assistant header.</li>
 *   <li>{@code plain}: {@code role: content\n} per message, then {@code assistant:} (no special tokens).</li>
 * </ul>
 * With tools, the built-in templates add the tools' JSON to the system message (a new one when there is none), and an
 * assistant message's earlier tool calls are written as Hermes {@code <tool_call>} blocks, so the prompt grows with
 * them as a model's own template makes it grow ({@link JinjaChatTemplate} renders exactly that).
 * Immutable.
 */
public enum ChatTemplate implements PromptTemplate
{
    /** ChatML. */
    CHATML,
    /** Llama 3 instruct. */
    LLAMA3,
    /** Plain text, for tokenizers without chat markers. */
    PLAIN;

    /**
     * One chat message: a role and its text content (content parts already joined), and for an assistant's earlier
     * turn its tool calls, for a tool's result the call it answers.
     *
     * @param role the role.
     * @param content the text.
     * @param toolCalls earlier tool calls, as sent ({@code {"id","type","function":{"name","arguments"}}} maps with
     *     the arguments parsed into a map, as vLLM hands them to templates); empty for none.
     * @param toolCallId the call a {@code tool} message answers, or null.
     */
    public record Message(String role, String content, List<Map<String, Object>> toolCalls, String toolCallId)
    {
        /**
         * A message without tool calls.
         *
         * @param role the role.
         * @param content the text.
         */
        public Message(final String role, final String content)
        {
            this(role, content, List.of(), null);
        }
    }

    /**
     * @param name a template name, case-insensitive.
     * @return the template.
     * @throws IllegalArgumentException naming the known templates.
     */
    public static ChatTemplate of(final String name)
    {
        try
        {
            return valueOf(name.toUpperCase(Locale.ROOT));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException("unknown chat template '" + name + "'; known: chatml, llama3, plain");
        }
    }

    @Override
    public String displayName()
    {
        return name().toLowerCase(Locale.ROOT) + " (built-in)";
    }

    /**
     * @param messages the conversation.
     * @return the prompt text, ending with the assistant's generation prompt.
     */
    public String render(final List<Message> messages)
    {
        return render(messages, List.of());
    }

    @Override
    public String render(final List<Message> messages, final List<Map<String, Object>> tools)
    {
        final List<Message> shown = tools.isEmpty() && messages.stream().allMatch(m -> m.toolCalls().isEmpty()) ?
            messages : withTools(messages, tools);
        final StringBuilder out = new StringBuilder(64);
        switch (this)
        {
            case CHATML:
                for (final Message m : shown)
                {
                    out.append("<|im_start|>").append(m.role()).append('\n').append(m.content()).append("<|im_end|>\n");
                }
                out.append("<|im_start|>assistant\n");
                break;
            case LLAMA3:
                out.append("<|begin_of_text|>");
                for (final Message m : shown)
                {
                    out.append("<|start_header_id|>").append(m.role()).append("<|end_header_id|>\n\n")
                        .append(m.content()).append("<|eot_id|>");
                }
                out.append("<|start_header_id|>assistant<|end_header_id|>\n\n");
                break;
            default:
                for (final Message m : shown)
                {
                    out.append(m.role()).append(": ").append(m.content()).append('\n');
                }
                out.append("assistant:");
        }
        return out.toString();
    }

    /**
     * The tools' JSON at the start of the system message, and earlier calls as Hermes blocks after their message.
     */
    private static List<Message> withTools(final List<Message> messages, final List<Map<String, Object>> tools)
    {
        final List<Message> out = new java.util.ArrayList<>(messages.size() + 1);
        String system = null;
        int from = 0;
        if (!messages.isEmpty() && "system".equals(messages.get(0).role()))
        {
            system = messages.get(0).content();
            from = 1;
        }
        if (!tools.isEmpty())
        {
            final StringBuilder text = new StringBuilder(256);
            if (null != system)
            {
                text.append(system).append("\n\n");
            }
            text.append("# Tools\n\nYou can call the functions below. Their signatures are inside <tools></tools>:\n")
                .append("<tools>");
            for (final Map<String, Object> tool : tools)
            {
                text.append('\n').append(PythonJson.dumps(tool));
            }
            text.append("\n</tools>\n\nTo call one, reply with a JSON object holding the function's name and " +
                "arguments inside <tool_call></tool_call> tags:\n<tool_call>\n{\"name\": <function-name>, " +
                "\"arguments\": <args-json-object>}\n</tool_call>");
            out.add(new Message("system", text.toString()));
        }
        else if (null != system)
        {
            out.add(messages.get(0));
        }
        for (final Message message : messages.subList(from, messages.size()))
        {
            final StringBuilder content = new StringBuilder(message.content());
            for (final Map<String, Object> call : message.toolCalls())
            {
                final Object function = call.get("function");
                final Map<?, ?> fields = function instanceof Map ? (Map<?, ?>)function : Map.of();
                content.append("\n<tool_call>\n{\"name\": ").append(PythonJson.dumps(fields.get("name")))
                    .append(", \"arguments\": ").append(PythonJson.dumps(fields.get("arguments")))
                    .append("}\n</tool_call>");
            }
            out.add(new Message(message.role(), content.toString()));
        }
        return out;
    }
}
