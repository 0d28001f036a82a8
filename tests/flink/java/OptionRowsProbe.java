// Test harness (tests/flink/test_option_tables.py): prints, for a few ConfigOptions named by their
// constants in Flink's own classes (compiled against flink-dist), the row the option table must
// hold: key <TAB> fallback keys <TAB> deprecated keys, in Flink's order.
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.FallbackKey;
import org.apache.flink.configuration.HighAvailabilityOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.kubernetes.configuration.KubernetesConfigOptions;
import org.apache.flink.yarn.configuration.YarnConfigOptions;

public final class OptionRowsProbe {
  private OptionRowsProbe() {}

  private static void row(ConfigOption<?> o) {
    List<String> fallback = new ArrayList<>();
    List<String> deprecated = new ArrayList<>();
    for (FallbackKey k : o.fallbackKeys()) {
      (k.isDeprecated() ? deprecated : fallback).add(k.getKey());
    }
    System.out.println(o.key() + "\t" + String.join(",", fallback) + "\t" + String.join(",", deprecated));
  }

  public static void main(String[] args) {
    row(CheckpointingOptions.CHECKPOINTS_DIRECTORY);
    row(CheckpointingOptions.SAVEPOINT_DIRECTORY);
    row(HighAvailabilityOptions.HA_MODE);
    row(HighAvailabilityOptions.HA_STORAGE_PATH);
    row(TaskManagerOptions.TOTAL_PROCESS_MEMORY);
    row(TaskManagerOptions.NUM_TASK_SLOTS);
    row(KubernetesConfigOptions.CONTAINER_IMAGE);
    row(KubernetesConfigOptions.TASK_MANAGER_CPU);
    row(YarnConfigOptions.NODE_LABEL);
    row(YarnConfigOptions.TASK_MANAGER_NODE_LABEL);
  }
}
