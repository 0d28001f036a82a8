/*
 * accelplane job helper (Java, Flink 1.20): a device per GPU subtask.
 *
 * Flink admits, it does not assign: every operator on a TaskManager sees ALL the GPUs its
 * TaskManager discovered (RuntimeContext.getExternalResourceInfos), so two subtasks of a GPU group
 * in one TaskManager would both pick device 0. GpuDevices.claim() gives each subtask its own
 * device(s) among those the TaskManager discovered:
 *
 *   private transient GpuDevices gpu;
 *   public void open(OpenContext ctx) { gpu = GpuDevices.claim(getRuntimeContext(), groups, "embed"); }
 *   public void close() { if (gpu != null) gpu.close(); }    // releases the device(s)
 *   ... gpu.indexes() -> e.g. ["1"]: set CUDA_VISIBLE_DEVICES / pick the device by index
 *
 * Guarantee: within one TaskManager JVM, no two live claims hold the same whole device, and
 * fractional claims on one device never add up to more than 1. The registry is JVM-wide (kept in
 * the system properties as a JDK map, so jobs with different user-code class loaders share it),
 * released by close(); a new attempt of the same subtask of the same job takes over the claims of
 * its earlier attempts (a restart after a failure whose close() never ran cannot leak devices).
 * Across TaskManagers on one host the devices are already disjoint: accelplane's discovery script
 * hands each TaskManager its own GPUs (coordination mode).
 *
 * Limits: this is bookkeeping, not isolation. All subtasks run in one JVM process; nothing stops
 * code from using a device it did not claim (CUDA_VISIBLE_DEVICES of the process cannot be changed
 * per thread). A subtask that never calls claim() is not counted.
 */
package io.accelplane.flink;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.RuntimeContext;

/** Devices claimed by one subtask; close() releases them. */
public final class GpuDevices implements AutoCloseable {

    static final String REGISTRY_PROPERTY = "io.accelplane.flink.GpuDevices.registry.v1";
    private static final double EPSILON = 1e-9;

    private final String resource;
    private final String holder;
    private final List<String> indexes;
    private final double share;
    private boolean closed;

    private GpuDevices(String resource, String holder, List<String> indexes, double share) {
        this.resource = resource;
        this.holder = holder;
        this.indexes = Collections.unmodifiableList(indexes);
        this.share = share;
    }

    /** Claims the GPUs one slot of {@code group} was admitted with (its resource and amount). */
    public static GpuDevices claim(RuntimeContext ctx, SlotGroups groups, String group) {
        String resource = groups.gpuResource(group);
        if (resource == null) {
            throw new IllegalArgumentException("slot group '" + group + "' asks for no GPU");
        }
        return claim(ctx, resource, groups.gpuAmount(group));
    }

    /**
     * Claims {@code amount} GPUs of external resource {@code resource} for the calling subtask: a
     * whole number takes that many devices exclusively, a fraction below 1 takes that share of one
     * device. Throws IllegalStateException when the TaskManager has no such free capacity (a
     * discovery failure, or more claims than Flink admitted).
     */
    public static GpuDevices claim(RuntimeContext ctx, String resource, double amount) {
        if (!(amount > 0) || (amount > 1 && Math.abs(amount - Math.rint(amount)) > EPSILON)) {
            throw new IllegalArgumentException("GPU amount must be a whole number or a fraction below 1: " + amount);
        }
        List<String> visible = new ArrayList<>();
        for (ExternalResourceInfo info : ctx.getExternalResourceInfos(resource)) {
            info.getProperty("index").ifPresent(visible::add);
        }
        visible.sort((a, b) -> numeric(a) != numeric(b) ? Long.compare(numeric(a), numeric(b)) : a.compareTo(b));
        String base = ctx.getJobInfo().getJobId() + "/" + ctx.getTaskInfo().getTaskName() + "/"
                + ctx.getTaskInfo().getIndexOfThisSubtask();
        String holder = base + "#" + ctx.getTaskInfo().getAttemptNumber();
        Map<String, Map<String, Double>> registry = registry();
        synchronized (registry) {
            // Earlier attempts of this subtask are gone (Flink runs one attempt at a time).
            for (Map.Entry<String, Map<String, Double>> e : registry.entrySet()) {
                e.getValue().keySet().removeIf(h -> h.startsWith(base + "#"));
            }
            List<String> chosen = new ArrayList<>();
            double share = amount >= 1 ? 1.0 : amount;
            int needed = amount >= 1 ? (int) Math.rint(amount) : 1;
            for (String index : visible) {
                if (chosen.size() == needed) {
                    break;
                }
                double used = used(registry.get(resource + "#" + index));
                if (used + share <= 1.0 + EPSILON) {
                    chosen.add(index);
                }
            }
            if (chosen.size() < needed) {
                throw new IllegalStateException(
                        "no free " + resource + " device for " + holder + ": the TaskManager discovered "
                                + visible + " and claims are " + describe(registry, resource)
                                + " (a TaskManager whose GPU discovery failed has none; see its log)");
            }
            for (String index : chosen) {
                registry.computeIfAbsent(resource + "#" + index, k -> new HashMap<>()).put(holder, share);
            }
            return new GpuDevices(resource, holder, chosen, share);
        }
    }

    /** Indexes of the claimed devices (the discovery script's index, e.g. nvidia-smi's). */
    public List<String> indexes() {
        return indexes;
    }

    /** Share of each claimed device (1.0 for whole devices). */
    public double share() {
        return share;
    }

    /** The external resource the devices belong to. */
    public String resource() {
        return resource;
    }

    /** Releases the devices (idempotent). */
    @Override
    public void close() {
        Map<String, Map<String, Double>> registry = registry();
        synchronized (registry) {
            if (closed) {
                return;
            }
            closed = true;
            for (String index : indexes) {
                Map<String, Double> holders = registry.get(resource + "#" + index);
                if (holders != null) {
                    holders.remove(holder);
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Map<String, Double>> registry() {
        Properties props = System.getProperties();
        synchronized (props) {
            Object existing = props.get(REGISTRY_PROPERTY);
            if (existing == null) {
                existing = new TreeMap<String, Map<String, Double>>();
                props.put(REGISTRY_PROPERTY, existing);
            }
            return (Map<String, Map<String, Double>>) existing;
        }
    }

    private static double used(Map<String, Double> holders) {
        double sum = 0;
        if (holders != null) {
            for (double s : holders.values()) {
                sum += s;
            }
        }
        return sum;
    }

    private static String describe(Map<String, Map<String, Double>> registry, String resource) {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<String, Map<String, Double>> e : registry.entrySet()) {
            if (e.getKey().startsWith(resource + "#") && !e.getValue().isEmpty()) {
                out.put(e.getKey().substring(resource.length() + 1), e.getValue());
            }
        }
        return out.toString();
    }

    private static long numeric(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }
}
