package dev.tapedeck.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import picocli.CommandLine;

/**
 * {@code serve --config FILE}: a YAML map of flags, keys named as the flags without {@code --}, as llm-d-inference-sim
 * and {@code vllm serve} read theirs. The file's flags come after the command line's, leaving out every flag the
 * command line gives (under any of its names), so the command line overrides the file, lists included, and a
 * positional MODEL is never taken as a list's value; a list is the flag repeated, {@code true} the bare flag,
 * {@code false} its {@code --no-} form (or nothing), a map its JSON. A key that is no flag of the command is named in
 * one warning line and skipped. Stateless.
 */
final class ConfigFile
{
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private ConfigFile()
    {
    }

    /**
     * @param args the command line.
     * @param root the command line's root, whose subcommand specs name the flags.
     * @param err where a skipped key is named.
     * @return the command line with the file's flags in front of the subcommand's own, and {@code --config} removed;
     *     the same array when there is no {@code --config}.
     * @throws IllegalArgumentException naming the file when it cannot be read or is not a map.
     */
    static String[] expand(final String[] args, final CommandLine root, final PrintWriter err)
    {
        if (args.length < 2 || !root.getSubcommands().containsKey(args[0]))
        {
            return args;
        }
        final CommandLine.Model.CommandSpec command = root.getSubcommands().get(args[0]).getCommandSpec();
        if (null == command.findOption("--config"))
        {
            return args;
        }
        Path file = null;
        final List<String> rest = new ArrayList<>();
        for (int i = 1; i < args.length; i++)
        {
            if ("--config".equals(args[i]) && i + 1 < args.length)
            {
                file = Path.of(args[++i]);
            }
            else if (args[i].startsWith("--config="))
            {
                file = Path.of(args[i].substring("--config=".length()));
            }
            else
            {
                rest.add(args[i]);
            }
        }
        if (null == file)
        {
            return args;
        }
        final java.util.Set<CommandLine.Model.OptionSpec> given = new java.util.HashSet<>();
        for (final String arg : rest)
        {
            final String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
            CommandLine.Model.OptionSpec option = name.startsWith("-") ? command.findOption(name) : null;
            if (null == option && name.startsWith("--no-"))
            {
                option = command.findOption("--" + name.substring(5));
            }
            if (null != option)
            {
                given.add(option);
            }
        }
        final List<String> expanded = new ArrayList<>();
        expanded.add(args[0]);
        expanded.addAll(rest);
        expanded.addAll(flags(read(file), command, given, file, err));
        return expanded.toArray(new String[0]);
    }

    private static JsonNode read(final Path file)
    {
        final JsonNode root;
        try
        {
            root = YAML.readTree(file.toFile());
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException("--config " + file + ": " + ex.getMessage().lines().findFirst()
                .orElse("cannot be read"), ex);
        }
        if (null == root || root.isMissingNode() || root.isNull())
        {
            return YAML.createObjectNode();
        }
        if (!root.isObject())
        {
            throw new IllegalArgumentException("--config " + file + ": expected a map of flags, e.g. 'port: 8000'");
        }
        return root;
    }

    private static List<String> flags(final JsonNode config, final CommandLine.Model.CommandSpec command,
        final java.util.Set<CommandLine.Model.OptionSpec> given, final Path file, final PrintWriter err)
    {
        final List<String> out = new ArrayList<>();
        for (final Map.Entry<String, JsonNode> entry : config.properties())
        {
            final String flag = "--" + entry.getKey();
            final CommandLine.Model.OptionSpec option = command.findOption(flag);
            if (null == option || "--config".equals(flag))
            {
                err.println("tapedeck " + command.name() + ": --config " + file + ": '" + entry.getKey() +
                    "' is not a flag of tapedeck " + command.name() + "; skipped");
                continue;
            }
            if (given.contains(option))
            {
                continue; // the command line's value wins
            }
            final JsonNode value = entry.getValue();
            if (value.isArray())
            {
                for (final JsonNode element : value)
                {
                    out.add(flag + "=" + text(element));
                }
            }
            else if (value.isBoolean() && option.arity().max() == 0)
            {
                if (value.asBoolean())
                {
                    out.add(flag);
                }
                else if (option.negatable())
                {
                    out.add("--no-" + flag.substring(2));
                }
            }
            else if (!value.isNull())
            {
                out.add(flag + "=" + text(value));
            }
        }
        return out;
    }

    private static String text(final JsonNode value)
    {
        return value.isContainerNode() ? value.toString() : value.asText();
    }
}
