package dev.tapedeck.load;

/**
 * Escapes text for HTML (element content and quoted attribute values alike): the five markup characters become
 * entities, and what no HTML or XML parser accepts (control characters other than tab and line breaks, unpaired
 * surrogates, U+FFFE, U+FFFF) becomes U+FFFD, so a label or note from user input can never open an element, close
 * one or break the page. Stateless.
 */
final class HtmlEscape
{
    private HtmlEscape()
    {
    }

    /**
     * @param text any text (null is treated as empty).
     * @return the text, safe inside an element or a double- or single-quoted attribute.
     */
    static String escape(final CharSequence text)
    {
        if (null == text)
        {
            return "";
        }
        final StringBuilder out = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            switch (c)
            {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default ->
                {
                    if (Character.isHighSurrogate(c) && i + 1 < text.length() &&
                        Character.isLowSurrogate(text.charAt(i + 1)))
                    {
                        out.append(c).append(text.charAt(++i));
                    }
                    else if (isForbidden(c))
                    {
                        out.append('\uFFFD');
                    }
                    else
                    {
                        out.append(c);
                    }
                }
            }
        }
        return out.toString();
    }

    private static boolean isForbidden(final char c)
    {
        return (c < 0x20 && '\t' != c && '\n' != c && '\r' != c) || (c >= 0x7F && c <= 0x9F) ||
            Character.isSurrogate(c) || '\uFFFE' == c || '\uFFFF' == c;
    }
}
