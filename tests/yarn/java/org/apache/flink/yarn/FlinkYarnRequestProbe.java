// Test harness: asks Flink's own YARN code (flink-dist of the apache-flink distribution) which
// container Flink's YarnResourceManagerDriver would request for a TaskManager, given a rendered
// Flink configuration directory, with Hadoop's classes (PyPI pyspark's hadoop-client jars) and the
// rendered resource-types.xml first on the classpath (as $HADOOP_CONF_DIR is for the RM and AM).
//
// It lives in package org.apache.flink.yarn because the driver's building blocks are package
// private. It repeats the driver's steps, in order, with the driver's own classes:
//   YarnWorkerResourceSpecFactory.createDefaultWorkerResourceSpec(config)       (the RM factory)
//   TaskExecutorProcessUtils.processSpecFromWorkerResourceSpec(config, spec)     (the TM process)
//   new TaskExecutorProcessSpecContainerResourcePriorityAdapter(maxResource,
//       ExternalResourceUtils.getExternalResourceConfigurationKeys(config, ".yarn.config-key"))
//   adapter.getPriorityAndResource(processSpec)              (YarnResourceManagerDriver.requestResource)
//   ContainerRequestReflector.INSTANCE.getContainerRequest(resource, priority,
//       config.get(YarnConfigOptions.TASK_MANAGER_NODE_LABEL))  (YarnResourceManagerDriver.addContainerRequest)
// maxResource is what the ResourceManager reports as the maximum container: every declared type at
// its maximum-allocation (ResourceUtils.getResourceTypesMaximumAllocation), memory and vcores unbounded
// (or the ResourceManager's, see --rm-site below).
//
// It also prints the shell command of each container kind as Flink builds it from
// yarn.container-start-command-template: the TaskManager's with the driver's own call
//   Utils.getTaskManagerShellCommand(config, ContaineredTaskManagerParameters.create(config, process),
//       ".", "<LOG_DIR>", false, true, false, YarnTaskExecutorRunner.class, "")
// (the arguments Utils.createTaskExecutorContext passes, with log4j and no krb5), and the
// JobManager's (application master's) with YarnClusterDescriptor.setupApplicationMasterContainer
// on a descriptor whose YarnClient is never started.
//
// With "--rm-site FILE" first (FILE "-" for none), maxResource's memory and vcores are the
// ResourceManager's maximum allocation (ResourceUtils.fetchMaximumAllocationFromConfig: yarn-default.xml,
// resource-types.xml and FILE), so a TaskManager above it gets no container resource, as in the driver.
//
// Usage: FlinkYarnRequestProbe [--rm-site FILE] FLINK_CONF_DIR...   Records (tab-separated), per directory:
//   request DIR resource NAME VALUE | request DIR label LABEL-or-"" | command DIR taskmanager CMD |
//   command DIR jobmanager CMD | am DIR memory-mb|vcores VALUE | ok DIR | error DIR MESSAGE
package org.apache.flink.yarn;

import java.util.Map;
import java.util.Optional;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.runtime.clusterframework.ContaineredTaskManagerParameters;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.jobmanager.JobManagerProcessSpec;
import org.apache.flink.runtime.jobmanager.JobManagerProcessUtils;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.externalresource.ExternalResourceUtils;
import org.apache.flink.runtime.resourcemanager.WorkerResourceSpec;
import org.apache.flink.yarn.configuration.YarnConfigOptions;
import org.apache.flink.yarn.entrypoint.YarnWorkerResourceSpecFactory;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

public final class FlinkYarnRequestProbe {
  private FlinkYarnRequestProbe() {}

  private static void out(String... fields) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < fields.length; i++) {
      if (i > 0) {
        b.append('\t');
      }
      b.append(String.valueOf(fields[i]).replace('\t', ' ').replace('\n', ' '));
    }
    System.out.println(b);
  }

  public static void main(String[] args) {
    ResourceUtils.resetResourceTypes(new YarnConfiguration());
    // "--rm-site FILE" (or "-" for none): the maximum container is the ResourceManager's, as
    // ResourceUtils.fetchMaximumAllocationFromConfig computes it from yarn-default.xml, the
    // classpath's resource-types.xml and that yarn-site fragment (what the CapacityScheduler
    // reports to the AM); without it memory and vcores are unbounded
    Resource rmMax = null;
    int first = 0;
    if (args.length > 1 && args[0].equals("--rm-site")) {
      YarnConfiguration rmConf = new YarnConfiguration();
      if (!args[1].equals("-")) {
        rmConf.addResource(new org.apache.hadoop.fs.Path(args[1]));
      }
      rmMax = ResourceUtils.fetchMaximumAllocationFromConfig(rmConf);
      first = 2;
    }
    for (int a = first; a < args.length; a++) {
      String dir = args[a];
      try {
        Configuration config = GlobalConfiguration.loadConfiguration(dir);
        WorkerResourceSpec worker =
            YarnWorkerResourceSpecFactory.INSTANCE.createDefaultWorkerResourceSpec(config);
        TaskExecutorProcessSpec process =
            TaskExecutorProcessUtils.processSpecFromWorkerResourceSpec(config, worker);
        Resource max = ResourceUtils.getResourceTypesMaximumAllocation();
        if (rmMax != null) {
          max.setMemorySize(rmMax.getMemorySize());
          max.setVirtualCores(rmMax.getVirtualCores());
        } else {
          max.setMemorySize(Long.MAX_VALUE);
          max.setVirtualCores(Integer.MAX_VALUE);
        }
        Map<String, String> keys =
            ExternalResourceUtils.getExternalResourceConfigurationKeys(
                config, YarnConfigOptions.EXTERNAL_RESOURCE_YARN_CONFIG_KEY_SUFFIX);
        TaskExecutorProcessSpecContainerResourcePriorityAdapter adapter =
            new TaskExecutorProcessSpecContainerResourcePriorityAdapter(max, keys);
        Optional<TaskExecutorProcessSpecContainerResourcePriorityAdapter.PriorityAndResource> pr =
            adapter.getPriorityAndResource(process);
        if (!pr.isPresent()) {
          throw new IllegalStateException("Flink computed no container resource for " + process);
        }
        AMRMClient.ContainerRequest request =
            ContainerRequestReflector.INSTANCE.getContainerRequest(
                pr.get().getResource(),
                pr.get().getPriority(),
                config.get(YarnConfigOptions.TASK_MANAGER_NODE_LABEL));
        for (ResourceInformation ri : request.getCapability().getResources()) {
          out("request", dir, "resource", ri.getName(), Long.toString(ri.getValue()));
        }
        String label = request.getNodeLabelExpression();
        out("request", dir, "label", label == null ? "" : label);
        String tm =
            Utils.getTaskManagerShellCommand(
                config,
                ContaineredTaskManagerParameters.create(config, process),
                ".",
                "<LOG_DIR>",
                false,
                true,
                false,
                YarnTaskExecutorRunner.class,
                "");
        out("command", dir, "taskmanager", tm);
        YarnClient client = YarnClient.createYarnClient();
        YarnClusterDescriptor descriptor =
            new YarnClusterDescriptor(
                config,
                new YarnConfiguration(),
                client,
                YarnClientYarnClusterInformationRetriever.create(client),
                true);
        JobManagerProcessSpec jm =
            JobManagerProcessUtils.processSpecFromConfigWithNewOptionToInterpretLegacyHeap(
                config, JobManagerOptions.TOTAL_PROCESS_MEMORY);
        String am =
            descriptor
                .setupApplicationMasterContainer(
                    "org.apache.flink.yarn.entrypoint.YarnSessionClusterEntrypoint", false, jm)
                .getCommands()
                .get(0);
        out("command", dir, "jobmanager", am);
        // the ApplicationMaster's container (YarnClusterDescriptor.startAppMaster: the JobManager's
        // total process memory in MiB and yarn.appmaster.vcores)
        out("am", dir, "memory-mb", Integer.toString(jm.getTotalProcessMemorySize().getMebiBytes()));
        out("am", dir, "vcores", Integer.toString(config.get(YarnConfigOptions.APP_MASTER_VCORES)));
        out("ok", dir);
      } catch (RuntimeException e) {
        out("error", dir, e.getClass().getSimpleName() + ": " + e.getMessage());
      }
    }
  }
}
