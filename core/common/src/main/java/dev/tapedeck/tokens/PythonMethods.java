package dev.tapedeck.tokens;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * Python's {@code str} and {@code dict} methods for Jinja templates run by Jinjava, which would otherwise look for
 * Java methods of those names: {@code startswith}, {@code endswith} (a string or a list of them), {@code split}
 * (Python's: trailing empty parts kept, no separator splits on whitespace), {@code strip}, {@code lstrip},
 * {@code rstrip} (with or without characters), {@code upper}, {@code lower}, {@code title}, {@code capitalize},
 * {@code replace}, {@code find}, {@code count}, {@code join}; {@code items}, {@code keys}, {@code values},
 * {@code get}. Every other lookup goes to the wrapped resolver.
 * <p>
 * Stateless apart from the wrapped resolver; safe to share.
 */
final class PythonMethods extends ELResolver
{
    private static final Object UNKNOWN = new Object();

    private final ELResolver next;

    PythonMethods(final ELResolver next)
    {
        this.next = next;
    }

    @Override
    public Object invoke(final ELContext context, final Object base, final Object method, final Class<?>[] types,
        final Object[] params)
    {
        final Object[] args = null == params ? new Object[0] : params;
        Object result = UNKNOWN;
        if (base instanceof CharSequence)
        {
            result = str(base.toString(), String.valueOf(method), args);
        }
        else if (base instanceof Map<?, ?> map)
        {
            result = dict(map, String.valueOf(method), args);
        }
        if (UNKNOWN != result)
        {
            context.setPropertyResolved(true);
            return result;
        }
        return next.invoke(context, base, method, types, params);
    }

    private static Object dict(final Map<?, ?> map, final String name, final Object[] args)
    {
        switch (name)
        {
            case "items":
            {
                final List<List<Object>> items = new ArrayList<>(map.size());
                map.forEach((key, value) -> items.add(Arrays.asList(key, value)));
                return items;
            }
            case "keys":
                return new ArrayList<>(map.keySet());
            case "values":
                return new ArrayList<>(map.values());
            case "get":
                return map.containsKey(args[0]) ? map.get(args[0]) : args.length > 1 ? args[1] : null;
            default:
                return UNKNOWN;
        }
    }

    static Object str(final String text, final String name, final Object[] args)
    {
        final String first = args.length > 0 && null != args[0] ? String.valueOf(args[0]) : null;
        switch (name)
        {
            case "startswith":
                return args[0] instanceof List<?> prefixes ? prefixes.stream().anyMatch(p ->
                    text.startsWith(String.valueOf(p))) : text.startsWith(first);
            case "endswith":
                return args[0] instanceof List<?> suffixes ? suffixes.stream().anyMatch(s ->
                    text.endsWith(String.valueOf(s))) : text.endsWith(first);
            case "strip":
                return rstrip(lstrip(text, first), first);
            case "lstrip":
                return lstrip(text, first);
            case "rstrip":
                return rstrip(text, first);
            case "split":
                return split(text, first, args.length > 1 ? ((Number)args[1]).intValue() : -1);
            case "upper":
                return text.toUpperCase(Locale.ROOT);
            case "lower":
                return text.toLowerCase(Locale.ROOT);
            case "replace":
                return text.replace(first, String.valueOf(args[1]));
            case "find":
                return (long)text.indexOf(first);
            case "count":
                return count(text, first);
            case "join":
                return join(text, (Iterable<?>)args[0]);
            case "title":
                return title(text);
            case "capitalize":
                return text.isEmpty() ? text : Character.toUpperCase(text.charAt(0)) +
                    text.substring(1).toLowerCase(Locale.ROOT);
            default:
                return UNKNOWN;
        }
    }

    private static boolean strips(final char ch, final String chars)
    {
        return null == chars ? Character.isWhitespace(ch) : chars.indexOf(ch) >= 0;
    }

    static String lstrip(final String text, final String chars)
    {
        int i = 0;
        while (i < text.length() && strips(text.charAt(i), chars))
        {
            i++;
        }
        return text.substring(i);
    }

    static String rstrip(final String text, final String chars)
    {
        int i = text.length();
        while (i > 0 && strips(text.charAt(i - 1), chars))
        {
            i--;
        }
        return text.substring(0, i);
    }

    /**
     * Python's {@code str.split}: with a separator, every part (trailing empty ones too) up to {@code maxSplit}
     * splits; without one, the runs of non-whitespace.
     */
    static List<String> split(final String text, final String separator, final int maxSplit)
    {
        final List<String> parts = new ArrayList<>();
        if (null != separator && separator.isEmpty())
        {
            throw new IllegalArgumentException("empty separator"); // Python's ValueError
        }
        if (null == separator)
        {
            for (final String part : text.strip().split("\\s+", maxSplit < 0 ? 0 : maxSplit + 1))
            {
                if (!part.isEmpty())
                {
                    parts.add(part);
                }
            }
            return parts;
        }
        int from = 0;
        for (int at = text.indexOf(separator); at >= 0 && (maxSplit < 0 || parts.size() < maxSplit);
            at = text.indexOf(separator, from))
        {
            parts.add(text.substring(from, at));
            from = at + separator.length();
        }
        parts.add(text.substring(from));
        return parts;
    }

    private static long count(final String text, final String needle)
    {
        if (needle.isEmpty())
        {
            return text.length() + 1L;
        }
        long count = 0;
        for (int at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length()))
        {
            count++;
        }
        return count;
    }

    private static String join(final String separator, final Iterable<?> items)
    {
        final StringBuilder out = new StringBuilder();
        boolean first = true;
        for (final Object item : items)
        {
            out.append(first ? "" : separator).append(item);
            first = false;
        }
        return out.toString();
    }

    private static String title(final String text)
    {
        final StringBuilder out = new StringBuilder(text.length());
        boolean upper = true;
        for (final char ch : text.toCharArray())
        {
            out.append(upper ? Character.toUpperCase(ch) : Character.toLowerCase(ch));
            upper = !Character.isLetter(ch);
        }
        return out.toString();
    }

    @Override
    public Class<?> getCommonPropertyType(final ELContext context, final Object base)
    {
        return next.getCommonPropertyType(context, base);
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(final ELContext context, final Object base)
    {
        return next.getFeatureDescriptors(context, base);
    }

    @Override
    public Class<?> getType(final ELContext context, final Object base, final Object property)
    {
        return next.getType(context, base, property);
    }

    @Override
    public Object getValue(final ELContext context, final Object base, final Object property)
    {
        return next.getValue(context, base, property);
    }

    @Override
    public boolean isReadOnly(final ELContext context, final Object base, final Object property)
    {
        return next.isReadOnly(context, base, property);
    }

    @Override
    public void setValue(final ELContext context, final Object base, final Object property, final Object value)
    {
        next.setValue(context, base, property, value);
    }
}
