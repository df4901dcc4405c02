package dev.tapedeck.cli.inspect;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine;

import dev.tapedeck.cli.VersionProvider;

/**
 * {@code tapedeck inspect conformance --manifest FILE}: the conformance assertions ({@link ConformanceRun}) on every
 * golden capture a manifest lists, as a table and optionally JSON. Exit code 0 when nothing failed (skips allowed),
 * 1 when an assertion failed, 2 for bad input. Runs on the calling thread.
 */
@CommandLine.Command(
    name = "conformance",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Check golden captures of real vLLM engines against tapedeck: integrity (sha256), line (the capture's vLLM " +
            "version is of the golden's line, one compat.toml lists), provenance (its config_hash is the " +
            "manifest's), schema (tapedeck reads everything in it: an ADD payload whole, a recorded engine " +
            "registration key for key) and, for role fidelity, its workload replayed with its own timing within the " +
            "calibration gates (docs/conformance.md).",
        "Exit code 0 when no assertion failed (skipped ones say why), 1 when one failed or no golden file was " +
            "present, 2 for bad input.",
        "Example: tapedeck inspect conformance --manifest conformance/manifest.toml"})
public final class ConformanceCommand implements Callable<Integer>
{
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @CommandLine.Option(names = "--manifest", paramLabel = "FILE", required = true,
        description = "The manifest of goldens (manifest.toml: [[golden]] line, path, sha256, config_hash, workload, " +
            "role).")
    Path manifest;

    @CommandLine.Option(names = "--compat", paramLabel = "FILE",
        description = "The supported lines (compat.toml; default: the compat.toml beside the manifest, else the one " +
            "built into tapedeck).")
    Path compat;

    @CommandLine.Option(names = "--line", paramLabel = "LINE",
        description = "Check only the goldens of this line (e.g. 0.23); a line without goldens is skipped.")
    String line;

    @CommandLine.Option(names = "--json", paramLabel = "FILE", description = "Also write the results as JSON.")
    Path json;

    @Override
    public Integer call() throws IOException
    {
        final List<ConformanceFiles.Line> lines = readLines();
        final List<ConformanceFiles.Golden> goldens = new ArrayList<>(ConformanceFiles.readManifest(manifest));
        if (null != line)
        {
            goldens.removeIf(g -> !g.line().equals(line));
        }
        final PrintWriter out = spec.commandLine().getOut();
        if (goldens.isEmpty())
        {
            out.println("no goldens" + (null == line ? "" : " for line " + line) + " in " + manifest + ": skipped");
            out.flush();
            return 0;
        }
        final Path base = null == manifest.toAbsolutePath().getParent() ? Path.of(".") :
            manifest.toAbsolutePath().getParent();
        final ConformanceRun run = new ConformanceRun(lines, base);
        final List<ConformanceRun.Result> results = new ArrayList<>();
        int failed = 0;
        int absent = 0;
        for (final ConformanceFiles.Golden golden : goldens)
        {
            final ConformanceRun.Result result = run.check(golden);
            results.add(result);
            failed += result.failed() ? 1 : 0;
            absent += result.checks().stream().anyMatch(c -> "fetch".equals(c.name()) &&
                ConformanceRun.Status.SKIP == c.status()) ? 1 : 0;
            out.println(golden.path() + "  (line " + golden.line() + ", " + golden.role() +
                (golden.workload().isEmpty() ? "" : ", " + golden.workload()) + ")");
            for (final ConformanceRun.Check check : result.checks())
            {
                out.printf("  %-10s %-4s  %s%n", check.name(), check.status(), check.detail());
            }
        }
        final boolean nothingChecked = absent == goldens.size();
        out.println("result: " + (0 == failed && !nothingChecked ? "PASS" : "FAIL") + ": " +
            (goldens.size() - failed - absent) + " of " + goldens.size() + " goldens checked without a failed " +
            "assertion" + (0 == absent ? "" : ", " + absent + " not present" + (nothingChecked ? ": nothing was " +
            "checked" : "")));
        if (null != json)
        {
            writeJson(results);
            out.println("json: " + json);
        }
        out.flush();
        return 0 == failed && !nothingChecked ? 0 : 1;
    }

    private List<ConformanceFiles.Line> readLines() throws IOException
    {
        if (null != compat)
        {
            return ConformanceFiles.readCompat(compat);
        }
        final Path beside = manifest.toAbsolutePath().resolveSibling("compat.toml");
        if (Files.isRegularFile(beside))
        {
            return ConformanceFiles.readCompat(beside);
        }
        final Path builtIn = Files.createTempFile("tapedeck-compat-", ".toml");
        try (java.io.InputStream in = ConformanceCommand.class.getResourceAsStream("/conformance/compat.toml"))
        {
            if (null == in)
            {
                throw new IllegalArgumentException("no compat.toml beside " + manifest + "; give --compat FILE");
            }
            Files.write(builtIn, in.readAllBytes());
            return ConformanceFiles.readCompat(builtIn);
        }
        finally
        {
            Files.deleteIfExists(builtIn);
        }
    }

    private void writeJson(final List<ConformanceRun.Result> results) throws IOException
    {
        final ArrayNode root = JSON.createArrayNode();
        for (final ConformanceRun.Result result : results)
        {
            final ObjectNode golden = root.addObject();
            golden.put("path", result.golden().path()).put("line", result.golden().line())
                .put("role", result.golden().role()).put("workload", result.golden().workload())
                .put("failed", result.failed());
            final ArrayNode checks = golden.putArray("checks");
            for (final ConformanceRun.Check check : result.checks())
            {
                checks.addObject().put("name", check.name()).put("status", check.status().name().toLowerCase(
                    java.util.Locale.ROOT)).put("detail", check.detail());
            }
        }
        final Path parent = json.toAbsolutePath().getParent();
        if (null != parent)
        {
            Files.createDirectories(parent);
        }
        JSON.writeValue(json.toFile(), root);
    }
}
