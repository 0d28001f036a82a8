import org.apache.flink.client.deployment.ClusterSpecification;
import org.apache.flink.client.deployment.application.ApplicationConfiguration;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.DeploymentOptionsInternal;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.kubernetes.KubernetesClusterClientFactory;
import org.apache.flink.kubernetes.KubernetesClusterDescriptor;
import org.apache.flink.kubernetes.artifact.DefaultKubernetesArtifactUploader;
import org.apache.flink.kubernetes.configuration.KubernetesConfigOptions;
import org.apache.flink.kubernetes.entrypoint.KubernetesWorkerResourceSpecFactory;
import org.apache.flink.kubernetes.kubeclient.Endpoint;
import org.apache.flink.kubernetes.kubeclient.Fabric8FlinkKubeClient;
import org.apache.flink.kubernetes.kubeclient.FlinkKubeClient;
import org.apache.flink.kubernetes.kubeclient.FlinkKubeClientFactory;
import org.apache.flink.kubernetes.kubeclient.FlinkPod;
import org.apache.flink.kubernetes.kubeclient.KubernetesJobManagerSpecification;
import org.apache.flink.kubernetes.kubeclient.factory.KubernetesTaskManagerFactory;
import org.apache.flink.kubernetes.kubeclient.parameters.KubernetesTaskManagerParameters;
import org.apache.flink.kubernetes.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.kubernetes.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.kubernetes.shaded.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.kubernetes.shaded.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.ConfigMap;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.HasMetadata;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.client.Config;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.client.ConfigBuilder;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.client.KubernetesClientBuilder;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.client.utils.Serialization;
import org.apache.flink.kubernetes.utils.Constants;
import org.apache.flink.kubernetes.utils.KubernetesUtils;
import org.apache.flink.runtime.clusterframework.BootstrapTools;
import org.apache.flink.runtime.clusterframework.ContaineredTaskManagerParameters;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.externalresource.ExternalResourceUtils;
import org.apache.flink.runtime.resourcemanager.WorkerResourceSpec;
import org.apache.flink.runtime.util.config.memory.ProcessMemoryUtils;

import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Builds the JobManager and TaskManager pods that Flink's native Kubernetes integration creates,
 * with Flink's own code and no API server (accelplane test harness, see tests/support/flink_pods.py).
 *
 * <p>Usage: {@code PodFactoryProbe <cases.json> <results.jsonl>}. {@code cases.json} is a list of
 * {@code {"id", "confDir", "jobManagerTemplate", "taskManagerTemplate"}}; the templates may be null.
 * One JSON line per case is written to {@code results.jsonl}.
 *
 * <p>JobManager side, exactly what {@code flink run-application} / {@code kubernetes-session.sh} do:
 * {@code GlobalConfiguration.loadConfiguration(confDir)}, {@code
 * KubernetesClusterClientFactory.getClusterSpecification}, then the real {@link
 * KubernetesClusterDescriptor} ({@code deployApplicationCluster} or {@code deploySessionCluster}),
 * which mutates the configuration, loads the pod template with {@code
 * KubernetesUtils.loadPodFromTemplateFile} and calls {@code
 * KubernetesJobManagerFactory.buildKubernetesJobManagerSpecification}. Its {@link FlinkKubeClient} is
 * a recorder: template loading goes to a real {@link Fabric8FlinkKubeClient} (offline fabric8 client;
 * {@code pods().load(file)} parses locally), {@code createJobManagerComponent} captures the
 * specification, {@code getService} finds nothing, {@code getRestEndpoint} answers a placeholder.
 *
 * <p>TaskManager side, what {@code KubernetesResourceManagerDriver} does inside that JobManager: the
 * configuration is the {@code flink-config-<cluster-id>} ConfigMap the JobManager mounts, the pod
 * template is the {@code pod-template-<cluster-id>} ConfigMap ({@code PodTemplateMountDecorator}); the
 * worker spec comes from {@code KubernetesWorkerResourceSpecFactory}, the process spec from {@code
 * TaskExecutorProcessUtils.processSpecFromWorkerResourceSpec} (as {@code ActiveResourceManager}
 * requests a worker), then {@code KubernetesTaskManagerParameters} and {@code
 * KubernetesTaskManagerFactory.buildTaskManagerKubernetesPod}.
 */
public final class PodFactoryProbe {

    /** What `flink run-application local://...` puts into pipeline.jars when the config has none. */
    static final String PLACEHOLDER_JAR = "local:///opt/flink/usrlib/accelplane-placeholder.jar";

    private PodFactoryProbe() {}

    public static void main(String[] args) throws Exception {
        ObjectMapper json = Serialization.jsonMapper();
        JsonNode cases = json.readTree(new File(args[0]));
        StringBuilder out = new StringBuilder();
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
        try {
            for (JsonNode c : cases) {
                ObjectNode result = json.createObjectNode();
                result.put("id", c.get("id").asText());
                try {
                    runCase(json, c, result, executor);
                } catch (Throwable t) {
                    StringWriter trace = new StringWriter();
                    t.printStackTrace(new PrintWriter(trace));
                    result.put("error", trace.toString());
                }
                out.append(json.writeValueAsString(result)).append('\n');
            }
        } finally {
            executor.shutdownNow();
        }
        Files.write(Path.of(args[1]), out.toString().getBytes(StandardCharsets.UTF_8));
        System.exit(0); // fabric8/okhttp and netty threads must not keep the JVM alive
    }

    private static String text(JsonNode c, String field) {
        JsonNode node = c.get(field);
        return node == null || node.isNull() ? null : node.asText();
    }

    private static void runCase(ObjectMapper json, JsonNode c, ObjectNode result, ScheduledExecutorService executor)
            throws Exception {
        File confDir = new File(text(c, "confDir"));
        Configuration conf = GlobalConfiguration.loadConfiguration(confDir.getAbsolutePath());
        // The client reads the templates from its own file system: here the rendered files.
        String jmTemplate = text(c, "jobManagerTemplate");
        String tmTemplate = text(c, "taskManagerTemplate");
        if (jmTemplate != null) {
            conf.set(KubernetesConfigOptions.JOB_MANAGER_POD_TEMPLATE, jmTemplate);
        }
        if (tmTemplate != null) {
            conf.set(KubernetesConfigOptions.TASK_MANAGER_POD_TEMPLATE, tmTemplate);
        }
        // What the CLI sets from FLINK_CONF_DIR (log4j/logback files are looked up there).
        conf.set(DeploymentOptionsInternal.CONF_DIR, confDir.getAbsolutePath());
        String clusterId = conf.get(KubernetesConfigOptions.CLUSTER_ID);

        Recorder recorder = new Recorder(offlineClient(conf, executor));
        FlinkKubeClient client = recorder.proxy();
        ClusterSpecification clusterSpec = new KubernetesClusterClientFactory().getClusterSpecification(conf);
        FlinkKubeClientFactory factory =
                new FlinkKubeClientFactory() {
                    @Override
                    public FlinkKubeClient fromConfiguration(Configuration flinkConfig, String useCase) {
                        return client;
                    }
                };
        if (!conf.contains(DeploymentOptions.TARGET)) {
            // What kubernetes-session.sh (KubernetesSessionCli) sets before deploying.
            conf.set(DeploymentOptions.TARGET, "kubernetes-session");
        }
        boolean application = "kubernetes-application".equals(conf.get(DeploymentOptions.TARGET));
        result.put("mode", application ? "application" : "session");
        try (KubernetesClusterDescriptor descriptor =
                new KubernetesClusterDescriptor(conf, factory, new DefaultKubernetesArtifactUploader())) {
            if (application) {
                if (!conf.contains(PipelineOptions.JARS)) {
                    conf.set(PipelineOptions.JARS, Collections.singletonList(PLACEHOLDER_JAR));
                }
                descriptor.deployApplicationCluster(clusterSpec, ApplicationConfiguration.fromConfiguration(conf));
            } else {
                descriptor.deploySessionCluster(clusterSpec);
            }
        }
        KubernetesJobManagerSpecification jmSpec = recorder.spec;
        if (jmSpec == null) {
            throw new IllegalStateException("the descriptor created no JobManager component");
        }
        ObjectNode spec = result.putObject("clusterSpecification");
        spec.put("masterMemoryMB", clusterSpec.getMasterMemoryMB());
        spec.put("taskManagerMemoryMB", clusterSpec.getTaskManagerMemoryMB());
        spec.put("slotsPerTaskManager", clusterSpec.getSlotsPerTaskManager());
        result.set("jobManagerDeployment", json.valueToTree(jmSpec.getDeployment()));
        ArrayNode accompanying = result.putArray("accompanyingResources");
        for (HasMetadata resource : jmSpec.getAccompanyingResources()) {
            accompanying.add(json.valueToTree(resource));
        }

        // ---- inside the JobManager: the resource manager creates a TaskManager pod ----
        Path jmConfDir = Files.createTempDirectory("accelplane-jm-conf-");
        ConfigMap flinkConfigMap = configMap(jmSpec, "flink-config-" + clusterId);
        for (Map.Entry<String, String> e : flinkConfigMap.getData().entrySet()) {
            Files.write(jmConfDir.resolve(e.getKey()), e.getValue().getBytes(StandardCharsets.UTF_8));
        }
        Configuration jmConf = GlobalConfiguration.loadConfiguration(jmConfDir.toString());
        // ActiveResourceManagerFactory.createActiveResourceManagerConfiguration
        Configuration rmConf = new Configuration(jmConf);
        rmConf.removeConfig(TaskManagerOptions.TASK_MANAGER_RESOURCE_ID);
        rmConf = TaskExecutorProcessUtils.getConfigurationMapLegacyTaskManagerHeapSizeToConfigOption(
                rmConf, TaskManagerOptions.TOTAL_PROCESS_MEMORY);

        FlinkPod tmPodTemplate = new FlinkPod.Builder().build();
        ConfigMap podTemplateMap = configMapOrNull(jmSpec, "pod-template-" + clusterId);
        if (podTemplateMap != null) {
            String name = KubernetesUtils.getTaskManagerPodTemplateFileInPod().getName();
            Path file = jmConfDir.resolve(name);
            Files.write(file, podTemplateMap.getData().get(name).getBytes(StandardCharsets.UTF_8));
            tmPodTemplate = KubernetesUtils.loadPodFromTemplateFile(client, file.toFile(), Constants.MAIN_CONTAINER_NAME);
        }
        WorkerResourceSpec worker = KubernetesWorkerResourceSpecFactory.INSTANCE.createDefaultWorkerResourceSpec(rmConf);
        TaskExecutorProcessSpec process = TaskExecutorProcessUtils.processSpecFromWorkerResourceSpec(rmConf, worker);
        String podName = String.format("%s-taskmanager-%d-%d", clusterId, 1, 1);
        ContaineredTaskManagerParameters containered = ContaineredTaskManagerParameters.create(rmConf, process);
        Configuration tmConf = new Configuration(rmConf);
        tmConf.set(TaskManagerOptions.TASK_MANAGER_RESOURCE_ID, podName);
        KubernetesTaskManagerParameters tmParams = new KubernetesTaskManagerParameters(
                rmConf,
                podName,
                BootstrapTools.getDynamicPropertiesAsString(rmConf, tmConf),
                ProcessMemoryUtils.generateJvmParametersStr(process),
                containered,
                ExternalResourceUtils.getExternalResourceConfigurationKeys(rmConf, "kubernetes.config-key"),
                Collections.emptySet());
        ObjectNode proc = result.putObject("taskExecutorProcess");
        proc.put("totalProcessMemoryMB", process.getTotalProcessMemorySize().getMebiBytes());
        proc.put("cpuCores", process.getCpuCores().getValue().doubleValue());
        result.set(
                "taskManagerPod",
                json.valueToTree(KubernetesTaskManagerFactory.buildTaskManagerKubernetesPod(tmPodTemplate, tmParams)
                        .getInternalResource()));
    }

    private static ConfigMap configMapOrNull(KubernetesJobManagerSpecification spec, String name) {
        for (HasMetadata resource : spec.getAccompanyingResources()) {
            if (resource instanceof ConfigMap && name.equals(resource.getMetadata().getName())) {
                return (ConfigMap) resource;
            }
        }
        return null;
    }

    private static ConfigMap configMap(KubernetesJobManagerSpecification spec, String name) {
        ConfigMap map = configMapOrNull(spec, name);
        if (map == null) {
            throw new IllegalStateException("no ConfigMap " + name + " among the JobManager's resources");
        }
        return map;
    }

    private static Fabric8FlinkKubeClient offlineClient(Configuration conf, ScheduledExecutorService executor) {
        Config config = new ConfigBuilder(Config.empty())
                .withMasterUrl("https://127.0.0.1:1/")
                .withNamespace(conf.get(KubernetesConfigOptions.NAMESPACE))
                .build();
        NamespacedKubernetesClient fabric8 =
                new KubernetesClientBuilder().withConfig(config).build().adapt(NamespacedKubernetesClient.class);
        return new Fabric8FlinkKubeClient(conf, fabric8, executor);
    }

    /** A FlinkKubeClient that records instead of calling an API server. */
    static final class Recorder {
        final Fabric8FlinkKubeClient delegate;
        KubernetesJobManagerSpecification spec;
        final List<String> calls = new ArrayList<>();

        Recorder(Fabric8FlinkKubeClient delegate) {
            this.delegate = delegate;
        }

        FlinkKubeClient proxy() {
            return (FlinkKubeClient) Proxy.newProxyInstance(
                    FlinkKubeClient.class.getClassLoader(),
                    new Class<?>[] {FlinkKubeClient.class},
                    (self, method, args) -> {
                        calls.add(method.getName());
                        switch (method.getName()) {
                            case "loadPodFromTemplateFile":
                                try {
                                    return method.invoke(delegate, args);
                                } catch (InvocationTargetException e) {
                                    throw e.getCause();
                                }
                            case "createJobManagerComponent":
                                spec = (KubernetesJobManagerSpecification) args[0];
                                return null;
                            case "getService":
                                return Optional.empty();
                            case "getRestEndpoint":
                                return Optional.of(new Endpoint("127.0.0.1", 8081));
                            case "close":
                                return null;
                            case "hashCode":
                                return System.identityHashCode(self);
                            case "equals":
                                return self == args[0];
                            case "toString":
                                return "PodFactoryProbe.Recorder";
                            default:
                                throw new UnsupportedOperationException(
                                        "PodFactoryProbe: Flink called FlinkKubeClient." + method.getName());
                        }
                    });
        }
    }
}
