package dev.tapedeck.cli;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Kubernetes manifests of {@code deploy/kubernetes} (docs/deploy.md), rendered by {@code kubectl kustomize} and
 * read into fabric8's Kubernetes model: no field the API does not know (at any depth), types as the API has them, and
 * what a tapedeck pod needs where llm-d deploys vLLM: llm-d's model-server labels, probes on the served port, the
 * downward API's {@code POD_IP}/{@code POD_NAME}, resource requests, unique port names, a Service that selects its
 * pods, and every tapedeck container's arguments accepted by tapedeck's own command line. Skipped with a printed
 * reason where {@code kubectl} is absent ({@code .ci/run} installs Debian's {@code kubernetes-client}).
 */
class KubernetesManifestsTest
{
    private static final Path DEPLOY = Path.of("../../deploy/kubernetes");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
        .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
    private static final Pattern VARIABLE = Pattern.compile("\\$\\(([A-Z_]+)\\)");

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/data-parallel", "overlays/pd"})
    void shouldRenderObjectsTheApiKnowsAndATapedeckPodNeeds(final String kustomization) throws Exception
    {
        final List<JsonNode> objects = render(DEPLOY.resolve(kustomization));
        final List<Deployment> deployments = new ArrayList<>();
        final List<Service> services = new ArrayList<>();
        for (final JsonNode object : objects)
        {
            final String kind = object.path("kind").asText();
            final KubernetesResource resource = switch (kind)
            {
                case "Deployment" -> YAML.treeToValue(object, Deployment.class);
                case "Service" -> YAML.treeToValue(object, Service.class);
                default -> throw new AssertionError(kustomization + ": unexpected kind " + kind);
            };
            final List<String> unknown = new ArrayList<>();
            unknownFields(resource, kind, unknown);
            assertTrue(unknown.isEmpty(), kustomization + ": fields the Kubernetes API does not have: " + unknown);
            if (resource instanceof Deployment deployment)
            {
                deployments.add(deployment);
            }
            else
            {
                services.add((Service)resource);
            }
        }
        assertFalse(deployments.isEmpty(), kustomization + " renders no Deployment");
        for (final Deployment deployment : deployments)
        {
            checkPod(kustomization, deployment);
        }
        for (final Service service : services)
        {
            assertTrue(deployments.stream().anyMatch(d -> d.getSpec().getTemplate().getMetadata().getLabels()
                .entrySet().containsAll(service.getSpec().getSelector().entrySet())),
                service.getMetadata().getName() + " selects no pod of " + kustomization);
        }
    }

    private static void checkPod(final String kustomization, final Deployment deployment)
    {
        final String where = kustomization + " " + deployment.getMetadata().getName();
        final Map<String, String> labels = deployment.getSpec().getTemplate().getMetadata().getLabels();
        assertTrue(labels.entrySet().containsAll(deployment.getSpec().getSelector().getMatchLabels().entrySet()),
            where + ": the selector matches the pod template");
        assertEquals("true", labels.get("llm-d.ai/inferenceServing"), where);
        assertNotNull(labels.get("llm-d.ai/role"), where);
        final PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        assertTrue(pod.getSecurityContext().getRunAsNonRoot(), where + ": non-root");
        final Set<String> portNames = new HashSet<>();
        final Set<Integer> portNumbers = new HashSet<>();
        for (final Container container : pod.getContainers())
        {
            for (final ContainerPort port : container.getPorts())
            {
                assertTrue(portNames.add(port.getName()), where + ": port name " + port.getName() + " twice");
                assertTrue(portNumbers.add(port.getContainerPort()), where + ": port " + port.getContainerPort() +
                    " twice");
            }
            assertNotNull(container.getResources().getRequests().get("cpu"), where + " " + container.getName());
            assertNotNull(container.getResources().getRequests().get("memory"), where + " " + container.getName());
        }
        final Container tapedeck = pod.getContainers().stream().filter(c -> "tapedeck".equals(c.getName()))
            .findFirst().orElseThrow(() -> new AssertionError(where + ": no tapedeck container"));
        final Map<String, String> fields = new java.util.HashMap<>();
        for (final EnvVar env : tapedeck.getEnv())
        {
            fields.put(env.getName(), null == env.getValueFrom() ? env.getValue() :
                env.getValueFrom().getFieldRef().getFieldPath());
        }
        assertEquals("status.podIP", fields.get("POD_IP"), where + ": the downward API's pod IP");
        assertEquals("metadata.name", fields.get("POD_NAME"), where);
        final List<String> args = new ArrayList<>();
        for (final String arg : tapedeck.getArgs())
        {
            final Matcher m = VARIABLE.matcher(arg);
            final StringBuilder expanded = new StringBuilder();
            while (m.find())
            {
                assertTrue(fields.containsKey(m.group(1)), where + ": $(" + m.group(1) + ") is not in the env");
                m.appendReplacement(expanded, Matcher.quoteReplacement("status.podIP".equals(fields.get(
                    m.group(1))) ? "10.0.0.7" : fields.get(m.group(1))));
            }
            m.appendTail(expanded);
            args.add(expanded.toString());
        }
        assertEquals("serve", args.get(0), where);
        final CommandLine.ParseResult parsed = Main.commandLine().parseArgs(args.toArray(new String[0]));
        final String port = String.valueOf(parsed.subcommand().matchedOption("--port").<Object>getValue());
        assertTrue(tapedeck.getPorts().stream().anyMatch(p -> port.equals(String.valueOf(p.getContainerPort()))),
            where + ": tapedeck's --port " + port + " is a container port");
        assertEquals(port, tapedeck.getReadinessProbe().getHttpGet().getPort().getStrVal() != null ?
            String.valueOf(tapedeck.getPorts().stream().filter(p -> p.getName().equals(tapedeck.getReadinessProbe()
                .getHttpGet().getPort().getStrVal())).findFirst().orElseThrow().getContainerPort()) :
            String.valueOf(tapedeck.getReadinessProbe().getHttpGet().getPort().getIntVal()), where + ": readiness");
        assertEquals("/health/ready", tapedeck.getReadinessProbe().getHttpGet().getPath(), where);
        assertEquals("/health", tapedeck.getLivenessProbe().getHttpGet().getPath(), where);
    }

    /** Fields the model kept as additional properties: names the Kubernetes API does not have. */
    private static void unknownFields(final Object value, final String path, final List<String> unknown)
        throws Exception
    {
        if (null == value)
        {
            return;
        }
        if (value instanceof List<?> list)
        {
            for (int i = 0; i < list.size(); i++)
            {
                unknownFields(list.get(i), path + "[" + i + "]", unknown);
            }
            return;
        }
        if (value instanceof Map<?, ?> map)
        {
            for (final Map.Entry<?, ?> entry : map.entrySet())
            {
                unknownFields(entry.getValue(), path + "." + entry.getKey(), unknown);
            }
            return;
        }
        if (!value.getClass().getName().startsWith("io.fabric8.kubernetes.api.model"))
        {
            return;
        }
        for (final Method getter : value.getClass().getMethods())
        {
            if (0 != getter.getParameterCount() || !getter.getName().startsWith("get") ||
                "getClass".equals(getter.getName()))
            {
                continue;
            }
            final Object field = getter.invoke(value);
            if ("getAdditionalProperties".equals(getter.getName()))
            {
                if (field instanceof Map<?, ?> extra && !extra.isEmpty())
                {
                    unknown.add(path + " " + extra.keySet());
                }
                continue;
            }
            unknownFields(field, path + "." + getter.getName().substring(3), unknown);
        }
    }

    private static List<JsonNode> render(final Path kustomization) throws IOException, InterruptedException
    {
        final Process process;
        try
        {
            process = new ProcessBuilder("kubectl", "kustomize", kustomization.toString())
                .redirectErrorStream(false).start();
        }
        catch (final IOException ex)
        {
            System.out.println("KubernetesManifestsTest skipped: no kubectl on PATH (.ci/run installs Debian's " +
                "kubernetes-client): " + ex.getMessage());
            Assumptions.abort("kubectl is not installed");
            throw ex;
        }
        final byte[] out = process.getInputStream().readAllBytes();
        final String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, process.exitValue(), "kubectl kustomize " + kustomization + ": " + err);
        final List<JsonNode> objects = new ArrayList<>();
        try (YAMLParser parser = ((YAMLFactory)YAML.getFactory()).createParser(out))
        {
            YAML.readValues(parser, JsonNode.class).forEachRemaining(node ->
            {
                if (node instanceof ObjectNode)
                {
                    objects.add(node);
                }
            });
        }
        assertTrue(Files.isDirectory(kustomization));
        return objects;
    }
}
