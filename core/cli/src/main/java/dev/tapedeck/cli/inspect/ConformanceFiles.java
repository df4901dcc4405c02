package dev.tapedeck.cli.inspect;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;

import dev.tapedeck.load.Calibration;

/**
 * The two files of the conformance suite, read from TOML: {@code compat.toml} (the vLLM lines tapedeck speaks) and
 * {@code manifest.toml} (golden captures from real engines). docs/conformance.md describes both. Stateless.
 */
final class ConformanceFiles
{
    private static final TomlMapper TOML = new TomlMapper();

    /**
     * One supported vLLM line.
     *
     * @param line the minor line ({@code 0.27}) or a tracker ({@code nightly}).
     * @param tag the release tag a build of this line is checked against.
     * @param protocolRev the wire layout tapedeck uses for it (a {@code VllmLine} label).
     * @param fidelityValidated whether a golden of this line replays within its gates.
     * @param isDefault the line used when none is named.
     */
    record Line(String line, String tag, String protocolRev, boolean fidelityValidated, boolean isDefault)
    {
    }

    /**
     * One golden capture.
     *
     * @param line the vLLM line it was captured on.
     * @param path where it is: relative to the manifest, absolute, or an http(s) URL.
     * @param sha256 its bytes' SHA-256, lowercase hex.
     * @param configHash its configuration fingerprint, or empty for a capture that has none.
     * @param workload what was sent.
     * @param role {@code schema} or {@code fidelity}.
     * @param tolerance the fidelity gates' tolerance.
     */
    record Golden(String line, String path, String sha256, String configHash, String workload, String role,
        double tolerance)
    {
    }

    private ConformanceFiles()
    {
    }

    /**
     * @param file a {@code compat.toml}.
     * @return its lines, in file order.
     * @throws IOException when it cannot be read.
     * @throws IllegalArgumentException (naming the file and the entry) when an entry is incomplete or there is not
     *     exactly one default.
     */
    static List<Line> readCompat(final Path file) throws IOException
    {
        final List<Line> lines = new ArrayList<>();
        int defaults = 0;
        final JsonNode entries = read(file).path("vllm");
        if (!entries.isArray())
        {
            throw new IllegalArgumentException(file + ": no [[vllm]] entries (an array of tables, one per line)");
        }
        for (int i = 0; i < entries.size(); i++)
        {
            final JsonNode entry = entries.get(i);
            final String where = file + ": [[vllm]] " + (i + 1);
            final Line line = new Line(text(entry, "line", where), text(entry, "tag", where),
                text(entry, "protocol_rev", where), entry.path("fidelity_validated").asBoolean(false),
                entry.path("default").asBoolean(false));
            defaults += line.isDefault() ? 1 : 0;
            lines.add(line);
        }
        if (lines.isEmpty() || 1 != defaults)
        {
            throw new IllegalArgumentException(file + ": needs [[vllm]] entries with exactly one default = true " +
                "(found " + lines.size() + " entries, " + defaults + " defaults)");
        }
        return lines;
    }

    /**
     * @param file a {@code manifest.toml}.
     * @return its goldens, in file order.
     * @throws IOException when it cannot be read.
     * @throws IllegalArgumentException (naming the file and the entry) for an incomplete entry, a bad hash or role.
     */
    static List<Golden> readManifest(final Path file) throws IOException
    {
        final List<Golden> goldens = new ArrayList<>();
        final JsonNode entries = read(file).path("golden");
        if (!entries.isArray() || entries.isEmpty())
        {
            throw new IllegalArgumentException(file + ": no [[golden]] entries (an array of tables, [[golden]], one " +
                "per capture)");
        }
        for (int i = 0; i < entries.size(); i++)
        {
            final JsonNode entry = entries.get(i);
            final String where = file + ": [[golden]] " + (i + 1);
            final String sha256 = text(entry, "sha256", where).toLowerCase(Locale.ROOT);
            final String configHash = entry.path("config_hash").asText("").toLowerCase(Locale.ROOT);
            final String role = text(entry, "role", where);
            if (!sha256.matches("[0-9a-f]{64}") || !configHash.matches("([0-9a-f]{64})?"))
            {
                throw new IllegalArgumentException(where + ": sha256 and config_hash are 64 hex digits (config_hash " +
                    "may be empty)");
            }
            if (!"schema".equals(role) && !"fidelity".equals(role))
            {
                throw new IllegalArgumentException(where + ": role must be schema or fidelity, got '" + role + "'");
            }
            final double tolerance = entry.path("tolerance").asDouble(Calibration.END_TO_END_TOLERANCE);
            if (!(tolerance > 0))
            {
                throw new IllegalArgumentException(where + ": tolerance must be above 0");
            }
            goldens.add(new Golden(text(entry, "line", where), text(entry, "path", where), sha256, configHash,
                entry.path("workload").asText(""), role, tolerance));
        }
        return goldens;
    }

    /**
     * @param version a vLLM version or tag ({@code v0.27.1}, {@code 0.23.0.dev1+g12}).
     * @return its {@code major.minor}, or null when it has none ({@code nightly}).
     */
    static String minorLine(final String version)
    {
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("^v?(\\d+)\\.(\\d+)").matcher(
            version.trim());
        return m.find() ? m.group(1) + "." + m.group(2) : null;
    }

    private static JsonNode read(final Path file) throws IOException
    {
        try
        {
            return TOML.readTree(file.toFile());
        }
        catch (final com.fasterxml.jackson.core.JacksonException ex)
        {
            throw new IllegalArgumentException(file + ": not TOML: " + ex.getOriginalMessage(), ex);
        }
    }

    private static String text(final JsonNode entry, final String field, final String where)
    {
        final JsonNode value = entry.get(field);
        if (null == value || !value.isTextual() || value.asText().isBlank())
        {
            throw new IllegalArgumentException(where + ": '" + field + "' is missing");
        }
        return value.asText();
    }
}
