package dev.tapedeck.tokens;

import java.util.List;
import java.util.Locale;

/**
 * Renders chat messages into the prompt text that is tokenized, with the generation prompt for the assistant's turn.
 * <ul>
 *   <li>{@code chatml} (default; Qwen, Hermes, many others):
 *       {@code <|im_start|>role\ncontent<|im_end|>\n} per message, then {@code <|im_start|>assistant\n}.</li>
 *   <li>{@code llama3}: {@code <|begin_of_text|>}, then per message
 *       {@code <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>}, then the assistant header.</li>
 *   <li>{@code plain}: {@code role: content\n} per message, then {@code assistant:} (no special tokens).</li>
 * </ul>
 * Immutable.
 */
public enum ChatTemplate
{
    /** ChatML. */
    CHATML,
    /** Llama 3 instruct. */
    LLAMA3,
    /** Plain text, for tokenizers without chat markers. */
    PLAIN;

    /**
     * One chat message: a role and its text content (content parts already joined).
     *
     * @param role the role.
     * @param content the text.
     */
    public record Message(String role, String content)
    {
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

    /**
     * @param messages the conversation.
     * @return the prompt text, ending with the assistant's generation prompt.
     */
    public String render(final List<Message> messages)
    {
        final StringBuilder out = new StringBuilder(64);
        switch (this)
        {
            case CHATML:
                for (final Message m : messages)
                {
                    out.append("<|im_start|>").append(m.role()).append('\n').append(m.content()).append("<|im_end|>\n");
                }
                out.append("<|im_start|>assistant\n");
                break;
            case LLAMA3:
                out.append("<|begin_of_text|>");
                for (final Message m : messages)
                {
                    out.append("<|start_header_id|>").append(m.role()).append("<|end_header_id|>\n\n")
                        .append(m.content()).append("<|eot_id|>");
                }
                out.append("<|start_header_id|>assistant<|end_header_id|>\n\n");
                break;
            default:
                for (final Message m : messages)
                {
                    out.append(m.role()).append(": ").append(m.content()).append('\n');
                }
                out.append("assistant:");
        }
        return out.toString();
    }
}
