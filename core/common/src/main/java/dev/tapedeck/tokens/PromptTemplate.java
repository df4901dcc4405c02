package dev.tapedeck.tokens;

import java.util.List;
import java.util.Map;

/**
 * Turns a chat request's messages and tools into the prompt text the model sees: a built-in template
 * ({@link ChatTemplate}) or the model's own Jinja chat template ({@link JinjaChatTemplate}).
 * <p>
 * Implementations are immutable and safe to call from any thread.
 */
public interface PromptTemplate
{
    /**
     * @return a short name for logs.
     */
    String displayName();

    /**
     * @param messages the conversation.
     * @param tools the request's tools as sent ({@code {"type":"function","function":{..}}} maps), possibly empty.
     * @return the prompt text, ending with the assistant's generation prompt.
     * @throws IllegalArgumentException when the template refuses the conversation (its {@code raise_exception}).
     */
    String render(List<ChatTemplate.Message> messages, List<Map<String, Object>> tools);
}
