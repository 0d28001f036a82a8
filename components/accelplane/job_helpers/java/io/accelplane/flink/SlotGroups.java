/*
 * accelplane job helper (Java, Flink 1.20 DataStream API). Source shipped with the accelplane
 * wheel under accelplane/job_helpers/java; copy it into the job's sources (it needs only Flink's
 * own classes, which are on the classpath of every Flink client and TaskManager).
 *
 * Builds Flink SlotSharingGroups from the slot-groups.json that accelplane renders for a cluster
 * (flink/<cluster>/slot-groups.json; on native Kubernetes also in the ConfigMap mounted at
 * /opt/flink/accelplane), so job code cannot drift from the platform's declaration:
 *
 *   SlotGroups groups = SlotGroups.load(Paths.get("/opt/flink/accelplane/slot-groups.json"));
 *   groups.register(env);                      // every group, "default" included
 *   stream.map(new Embed()).slotSharingGroup(groups.get("embed"));
 *
 * register() matters: operators that name no group run in "default"; registered with its own
 * resources they never take GPU capacity (unregistered, Flink would give each default slot
 * TaskManager total / numberOfTaskSlots, GPUs included).
 */
package io.accelplane.flink;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.flink.api.common.operators.SlotSharingGroup;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/** The slot groups of one accelplane-rendered Flink cluster. */
public final class SlotGroups implements java.io.Serializable {

    private static final long serialVersionUID = 1L;

    /** Format tag of the group file this helper reads. */
    public static final String FORMAT = "accelplane.io/slot-groups/v1";

    /** Name of the group of operators that name none. */
    public static final String DEFAULT_GROUP = "default";

    private final String cluster;
    private final Map<String, SlotSharingGroup> groups;
    private final Map<String, String> gpuResources;
    private final Map<String, Double> gpuAmounts;
    private final Map<String, Integer> slots;

    private SlotGroups(
            String cluster,
            Map<String, SlotSharingGroup> groups,
            Map<String, String> gpuResources,
            Map<String, Double> gpuAmounts,
            Map<String, Integer> slots) {
        this.cluster = cluster;
        this.slots = Collections.unmodifiableMap(slots);
        this.groups = Collections.unmodifiableMap(groups);
        this.gpuResources = Collections.unmodifiableMap(gpuResources);
        this.gpuAmounts = Collections.unmodifiableMap(gpuAmounts);
    }

    /** Reads a rendered slot-groups.json. */
    public static SlotGroups load(Path file) throws IOException {
        return parse(new String(Files.readAllBytes(file), StandardCharsets.UTF_8), file.toString());
    }

    /** Parses the text of a slot-groups.json; {@code source} names it in error messages. */
    public static SlotGroups parse(String json, String source) throws IOException {
        JsonNode root = new ObjectMapper().readTree(json);
        if (root == null || !FORMAT.equals(root.path("format").asText())) {
            throw new IOException(source + ": not an accelplane slot group file (format " + FORMAT + ")");
        }
        Map<String, SlotSharingGroup> groups = new LinkedHashMap<>();
        Map<String, String> resources = new LinkedHashMap<>();
        Map<String, Double> amounts = new LinkedHashMap<>();
        Map<String, Integer> slots = new LinkedHashMap<>();
        for (JsonNode g : root.path("groups")) {
            String name = g.path("name").asText();
            SlotSharingGroup.Builder b =
                    SlotSharingGroup.newBuilder(name)
                            .setCpuCores(g.path("cpuCores").asDouble())
                            .setTaskHeapMemoryMB(g.path("taskHeapMemoryMB").asInt());
            int managed = g.path("managedMemoryMB").asInt(0);
            if (managed > 0) {
                b.setManagedMemoryMB(managed);
            }
            Iterator<Map.Entry<String, JsonNode>> ext = g.path("externalResources").fields();
            while (ext.hasNext()) {
                Map.Entry<String, JsonNode> e = ext.next();
                b.setExternalResource(e.getKey(), e.getValue().asDouble());
            }
            groups.put(name, b.build());
            slots.put(name, g.path("slots").asInt(0));
            if (g.hasNonNull("gpuResource")) {
                resources.put(name, g.get("gpuResource").asText());
                amounts.put(name, g.path("gpuAmount").asDouble());
            }
        }
        if (!groups.containsKey(DEFAULT_GROUP)) {
            throw new IOException(source + ": no 'default' group (accelplane always declares one)");
        }
        return new SlotGroups(root.path("cluster").asText(), groups, resources, amounts, slots);
    }

    /** The group called {@code name}; unknown names are an error listing the declared ones. */
    public SlotSharingGroup get(String name) {
        SlotSharingGroup g = groups.get(name);
        if (g == null) {
            throw new IllegalArgumentException(
                    "slot group '" + name + "' is not declared for Flink cluster " + cluster
                            + " (declared: " + groups.keySet() + "); add it to the spec's slotGroups");
        }
        return g;
    }

    /** Registers every group with the environment, so operators that only name a group (and the
     * ones in "default") get the declared resources. Returns the environment. */
    public StreamExecutionEnvironment register(StreamExecutionEnvironment env) {
        for (SlotSharingGroup g : groups.values()) {
            env.registerSlotSharingGroup(g);
        }
        return env;
    }

    /** Flink external resource a GPU group asks for, or null for a group without GPUs. */
    public String gpuResource(String name) {
        get(name);
        return gpuResources.get(name);
    }

    /** GPUs per slot of a group (0 without GPUs). */
    public double gpuAmount(String name) {
        get(name);
        return gpuAmounts.getOrDefault(name, 0.0);
    }

    /** Slots the platform sized the cluster for (use it as the group's parallelism). */
    public int slots(String name) {
        get(name);
        return slots.get(name);
    }

    /** Declared group names, in file order. */
    public Iterable<String> names() {
        return groups.keySet();
    }

    /** The cluster the file was rendered for. */
    public String cluster() {
        return cluster;
    }
}
