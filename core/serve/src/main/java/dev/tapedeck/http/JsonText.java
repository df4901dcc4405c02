package dev.tapedeck.http;

/**
 * JSON string literals for control-path responses (ids, model names, error messages), escaped as vLLM's Python
 * server does: quotes, backslashes and control characters escaped, everything else raw.
 */
final class JsonText
{
    private JsonText()
    {
    }

    static String quote(final String text)
    {
        if (null == text)
        {
            return "null";
        }
        final StringBuilder out = new StringBuilder(text.length() + 2);
        out.append('"');
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            switch (c)
            {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                case '\b':
                    out.append("\\b");
                    break;
                case '\f':
                    out.append("\\f");
                    break;
                default:
                    if (c < 0x20)
                    {
                        out.append(String.format("\\u%04x", (int)c));
                    }
                    else
                    {
                        out.append(c);
                    }
            }
        }
        return out.append('"').toString();
    }
}
