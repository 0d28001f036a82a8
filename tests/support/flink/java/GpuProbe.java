/*
 * Flink job used by the accelplane test harness (tests/support/flink/).
 *
 * Runs one source subtask per slot (parallelism = first argument, default 1).
 * Each subtask asks its RuntimeContext for the external resource named by the
 * second argument (default "gpu") and emits ONE line describing what the
 * TaskManager it runs in was given by the external resource driver:
 *
 *   GPUPROBE subtask=<i> parallelism=<n> tm=<resource-id> pid=<tm pid> host=<address> indexes=<i1;i2>
 *
 * The client collects the lines with executeAndCollect(), prints them sorted to
 * stdout and finishes with "GPUPROBE_DONE count=<lines>".
 *
 * tm is the TaskManager resource id (taskmanager.resource-id; the harness sets
 * it to tm-<n> per TaskManager, otherwise it is Flink's generated id taken from
 * the TM working directory name), pid is the TaskManager JVM pid (it matches the
 * daemon pid files and Flink's coordination file), indexes are the sorted
 * GPUInfo "index" properties, empty when the TM has no GPU.
 */

import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.taskmanager.TaskManagerRuntimeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.source.RichParallelSourceFunction;
import org.apache.flink.streaming.api.operators.StreamingRuntimeContext;
import org.apache.flink.util.CloseableIterator;

public class GpuProbe {

    public static void main(String[] args) throws Exception {
        int parallelism = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        String resource = args.length > 1 ? args[1] : "gpu";

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        DataStream<String> lines =
                env.addSource(new ProbeSource(resource))
                        .setParallelism(parallelism)
                        .name("accelplane-gpu-probe");

        List<String> collected = new ArrayList<>();
        try (CloseableIterator<String> it = lines.executeAndCollect("accelplane-gpu-probe")) {
            while (it.hasNext()) {
                collected.add(it.next());
            }
        }
        Collections.sort(collected);
        for (String line : collected) {
            System.out.println(line);
        }
        System.out.println("GPUPROBE_DONE count=" + collected.size());
    }

    /** Emits exactly one description line per subtask, then finishes. */
    public static final class ProbeSource extends RichParallelSourceFunction<String> {
        private static final long serialVersionUID = 1L;

        private final String resource;

        public ProbeSource(String resource) {
            this.resource = resource;
        }

        @Override
        public void run(SourceContext<String> ctx) throws Exception {
            StreamingRuntimeContext rc = (StreamingRuntimeContext) getRuntimeContext();
            Set<ExternalResourceInfo> infos = rc.getExternalResourceInfos(resource);
            List<String> indexes = new ArrayList<>();
            for (ExternalResourceInfo info : infos) {
                indexes.add(info.getProperty("index").orElse("?"));
            }
            Collections.sort(indexes);

            TaskManagerRuntimeInfo tmInfo = rc.getTaskManagerRuntimeInfo();
            String tm = tmInfo.getConfiguration().get(TaskManagerOptions.TASK_MANAGER_RESOURCE_ID);
            if (tm == null || tm.isEmpty()) {
                tm = resourceIdFromWorkingDir(tmInfo.getTmpWorkingDirectory());
            }

            String line =
                    "GPUPROBE subtask="
                            + rc.getTaskInfo().getIndexOfThisSubtask()
                            + " parallelism="
                            + rc.getTaskInfo().getNumberOfParallelSubtasks()
                            + " tm="
                            + tm.replace(' ', '_')
                            + " pid="
                            + ProcessHandle.current().pid()
                            + " host="
                            + tmInfo.getTaskManagerExternalAddress()
                            + " indexes="
                            + String.join(";", indexes);
            synchronized (ctx.getCheckpointLock()) {
                ctx.collect(line);
            }
        }

        @Override
        public void cancel() {}

        private static String resourceIdFromWorkingDir(File tmpWorkingDir) {
            // <working dir>/tm_<resource id>/tmp
            for (File f = tmpWorkingDir; f != null; f = f.getParentFile()) {
                String name = f.getName();
                if (name.startsWith("tm_")) {
                    return name.substring(3);
                }
            }
            return "unknown";
        }
    }
}
