/*
 * Test job for tests/gpu_slots/test_gpu_slots_flink.py: built with the project's Java helper
 * (components/accelplane/job_helpers/java) from a rendered slot-groups.json.
 *
 * One probe source per declared group, parallelism = the group's slots, in that group (the
 * "default" group's probe names no group: it lands in "default" like any unassigned operator).
 * Each GPU subtask claims its device(s) with GpuDevices in open() and writes one file
 *   <outDir>/<group>-<subtask>-<attempt>.txt:
 *   group=<g> subtask=<i> attempt=<a> tm=<resource-id> resource=<r> claimed=<i;j> visible=<i;j>
 * then waits for <releaseFile> (so the test can read the TaskManagers' free resources while every
 * slot is held). With failGroup set, subtask 0 of that group fails once after claiming (attempt 0)
 * and the job restarts: claims must be right again in attempt 1.
 */

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.accelplane.flink.GpuDevices;
import io.accelplane.flink.SlotGroups;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.functions.source.RichParallelSourceFunction;
import org.apache.flink.streaming.api.operators.StreamingRuntimeContext;

public class SlotGroupsJob {

    public static void main(String[] args) throws Exception {
        SlotGroups groups = SlotGroups.load(Paths.get(args[0]));
        String outDir = args[1];
        String release = args[2];
        String failGroup = args.length > 3 ? args[3] : "";
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        groups.register(env);
        env.setRestartStrategy(RestartStrategies.fixedDelayRestart(3, 0L));
        List<DataStream<String>> streams = new ArrayList<>();
        for (String name : groups.names()) {
            int slots = groups.slots(name);
            if (slots == 0) {
                continue;
            }
            DataStreamSource<String> source =
                    env.addSource(new Probe(groups, name, outDir, release, name.equals(failGroup)), "probe-" + name);
            source.setParallelism(slots);
            if (!name.equals(SlotGroups.DEFAULT_GROUP)) {
                source.slotSharingGroup(groups.get(name));
            }
            streams.add(source);
        }
        DataStream<String> all = streams.get(0);
        for (DataStream<String> s : streams.subList(1, streams.size())) {
            all = all.union(s);
        }
        all.addSink(new DiscardingSink<>()).setParallelism(1);
        env.execute("accelplane-slot-groups");
    }

    static final class Probe extends RichParallelSourceFunction<String> {
        private final SlotGroups groups;
        private final String group;
        private final String outDir;
        private final String release;
        private final boolean failOnce;
        private transient GpuDevices devices;
        private volatile boolean running = true;

        Probe(SlotGroups groups, String group, String outDir, String release, boolean failOnce) {
            this.groups = groups;
            this.group = group;
            this.outDir = outDir;
            this.release = release;
            this.failOnce = failOnce;
        }

        @Override
        public void open(Configuration parameters) {
            if (groups.gpuResource(group) != null) {
                devices = GpuDevices.claim(getRuntimeContext(), groups, group);
            }
        }

        @Override
        public void run(SourceContext<String> ctx) throws Exception {
            int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            int attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
            String resource = groups.gpuResource(group);
            Set<String> visible = new TreeSet<>();
            if (resource != null) {
                for (ExternalResourceInfo info : getRuntimeContext().getExternalResourceInfos(resource)) {
                    info.getProperty("index").ifPresent(visible::add);
                }
            }
            String tm = ((StreamingRuntimeContext) getRuntimeContext())
                    .getTaskManagerRuntimeInfo().getConfiguration()
                    .get(TaskManagerOptions.TASK_MANAGER_RESOURCE_ID);
            String line = "group=" + group + " subtask=" + subtask + " attempt=" + attempt + " tm=" + tm
                    + " resource=" + (resource == null ? "-" : resource)
                    + " claimed=" + (devices == null ? "" : String.join(";", devices.indexes()))
                    + " visible=" + String.join(";", visible) + "\n";
            File tmp = new File(outDir, "." + group + "-" + subtask + "-" + attempt + ".tmp");
            Files.write(tmp.toPath(), line.getBytes(StandardCharsets.UTF_8));
            Files.move(tmp.toPath(), new File(outDir, group + "-" + subtask + "-" + attempt + ".txt").toPath());
            if (failOnce && subtask == 0 && attempt == 0) {
                throw new RuntimeException("planned failure of " + group + " subtask 0, attempt 0");
            }
            while (running && !new File(release).exists()) {
                Thread.sleep(100);
            }
        }

        @Override
        public void cancel() {
            running = false;
        }

        @Override
        public void close() throws Exception {
            if (devices != null) {
                devices.close();
            }
            super.close();
        }
    }
}
