// Test harness for tests/yarn/test_queue_numbers.py: reads a CapacityScheduler absolute resource
// vector the way the ResourceManager does and asks whether a container fits a queue maximum, with
// Hadoop's own Resource, ResourceInformation, ResourceUtils, UnitsConversionUtil, Resources and
// DominantResourceCalculator (hadoop-client-api from PyPI pyspark). The CapacityScheduler classes
// themselves (hadoop-yarn-server-resourcemanager) are not in those jars, so the parse below restates
// CapacitySchedulerConfiguration.internalGetLabeledResourceRequirementForQueue and
// updateResourceValuesFromConfig of apache/hadoop rel/release-3.4.1 (CapacitySchedulerConfiguration
// .java:2723-2734 getUnits, 2853-2945) statement by statement, and the fit is the test of
// AbstractCSQueue.accept (AbstractCSQueue.java:1093: Resources.fitsIn(resourceCalculator,
// used + allocated, queue max resource)).
//
// amlimit is a queue's AM limit as AbstractLeafQueue.calculateAndGetAMResourceLimitPerPartition
// computes it (AbstractLeafQueue.java:780-831: Resources.multiplyAndNormalizeUp of the queue's
// guaranteed resource by maximum-am-resource-percent, step = the minimum allocation, 1024 MiB and
// 1 vcore by default) and whether the AMs fit it (activateApplications, :876: fitsIn).
//
// Usage: QueueVectorProbe (vector VALUE | fits MEMORY-MB VCORES VALUE
//                          | amlimit VALUE PERCENT AM-MEMORY-MB AM-VCORES)...
// Records: "vector VALUE none" (Hadoop ignores the vector: no memory), "vector VALUE MEMORY VCORES
// NAME=VALUE...", "fits VALUE true|false", "amlimit VALUE PERCENT LIMIT-MEMORY LIMIT-VCORES
// true|false", or "error VALUE EXCEPTION-CLASS".
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.util.UnitsConversionUtil;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.apache.hadoop.yarn.util.resource.Resources;

public final class QueueVectorProbe {
  // CapacitySchedulerConfiguration.PATTERN_FOR_ABSOLUTE_RESOURCE
  private static final Pattern RESOURCE_PATTERN = Pattern.compile("^\\[[\\w\\.,\\-_=\\ /]+\\]$");
  // AbstractCSQueue.resourceTypes: AbsoluteResourceType values, lower case
  private static final Set<String> RESOURCE_TYPES = Set.of("memory", "vcores");

  private QueueVectorProbe() {}

  private static String getUnits(String resourceValue) {
    for (int i = 0; i < resourceValue.length(); i++) {
      if (Character.isAlphabetic(resourceValue.charAt(i))) {
        String units = resourceValue.substring(i);
        if (!units.isEmpty() && units.chars().allMatch(Character::isLetter)) { // StringUtils.isAlpha
          return units;
        }
      }
    }
    return "";
  }

  private static void update(Resource resource, String[] splits) {
    String resourceName = splits[0].trim();
    if (!RESOURCE_TYPES.contains(resourceName)
        && !ResourceUtils.getResourceTypes().containsKey(resourceName)) {
      return;
    }
    String units = getUnits(splits[1]);
    if (!UnitsConversionUtil.KNOWN_UNITS.contains(units)) {
      return;
    }
    Long resourceValue = Long.valueOf(splits[1].substring(0, splits[1].length() - units.length()));
    if (!units.isEmpty()) {
      resourceValue = UnitsConversionUtil.convert(units, "Mi", resourceValue);
    }
    if (!RESOURCE_TYPES.contains(resourceName)) {
      resource.setResourceInformation(resourceName,
          ResourceInformation.newInstance(resourceName, units, resourceValue));
      return;
    }
    if (resourceName.equals("memory")) {
      resource.setMemorySize(resourceValue);
    } else {
      resource.setVirtualCores(resourceValue.intValue());
    }
  }

  /** The vector as the CapacityScheduler holds it; Resources.none() when it has no memory. */
  static Resource parse(String value) {
    Resource resource = Resource.newInstance(0L, 0);
    Matcher matcher = RESOURCE_PATTERN.matcher(value);
    if (matcher.find()) {
      String subGroup = matcher.group(0);
      subGroup = subGroup.substring(1, subGroup.length() - 1);
      for (String kvPair : subGroup.trim().split(",")) {
        String[] splits = kvPair.split("=");
        if (splits != null && splits.length > 1) {
          update(resource, splits);
        }
      }
    }
    if (resource.getMemorySize() == 0L) {
      return Resources.none();
    }
    return resource;
  }

  public static void main(String[] args) {
    int i = 0;
    while (i < args.length) {
      String cmd = args[i++];
      String value = "";
      try {
        if (cmd.equals("vector")) {
          value = args[i++];
          Resource r = parse(value);
          if (r.equals(Resources.none())) {
            System.out.println("vector\t" + value + "\tnone");
            continue;
          }
          StringBuilder line = new StringBuilder("vector\t" + value + "\t" + r.getMemorySize() + "\t"
              + r.getVirtualCores());
          for (ResourceInformation ri : r.getResources()) {
            if (!ri.getName().equals("memory-mb") && !ri.getName().equals("vcores")) {
              line.append("\t").append(ri.getName()).append("=").append(ri.getValue());
            }
          }
          System.out.println(line);
        } else if (cmd.equals("fits")) {
          Resource request = Resource.newInstance(Long.parseLong(args[i++]), Integer.parseInt(args[i++]));
          value = args[i++];
          boolean fits = Resources.fitsIn(new DominantResourceCalculator(), request, parse(value));
          System.out.println("fits\t" + value + "\t" + fits);
        } else if (cmd.equals("amlimit")) {
          value = args[i++];
          float percent = Float.parseFloat(args[i++]); // Configuration.getFloat
          Resource ams = Resource.newInstance(Long.parseLong(args[i++]), Integer.parseInt(args[i++]));
          DominantResourceCalculator calculator = new DominantResourceCalculator();
          Resource limit = Resources.multiplyAndNormalizeUp(calculator, parse(value), percent,
              Resource.newInstance(1024L, 1));
          System.out.println("amlimit\t" + value + "\t" + percent + "\t" + limit.getMemorySize() + "\t"
              + limit.getVirtualCores() + "\t" + calculator.fitsIn(ams, limit));
        } else {
          throw new IllegalArgumentException("unknown command " + cmd);
        }
      } catch (RuntimeException e) {
        System.out.println("error\t" + value + "\t" + e.getClass().getName());
      }
    }
  }
}
