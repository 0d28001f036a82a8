// Test harness: loads accelplane's rendered YARN files with Hadoop's own classes (the
// hadoop-client-api/-runtime jars that PyPI pyspark ships) and prints what Hadoop understood, one
// tab-separated record per line, for tests/yarn/test_hadoop.py to compare with the spec.
//
// Commands (any number, processed in order; a failing command prints an "error" record and the
// next command still runs):
//   types                 resource types via ResourceUtils (resource-types.xml from the classpath,
//                         exactly as the ResourceManager and NodeManagers find it)
//   typesfile FILE        resource types from FILE (for negative tests)
//   node POOL FILE        node-resources FILE via ResourceUtils.getNodeResourceInformation, put into
//                         a Resource like NodeManagerHardwareUtils.getNodeResources does (undeclared
//                         types throw ResourceNotFoundException)
//   conf FILE             every property of FILE as Hadoop's Configuration parser reads it
//   known KEY             whether yarn-default.xml of this Hadoop (in hadoop-client-api) names KEY
//   vector VALUE          a CapacityScheduler absolute resource vector: names must be memory,
//                         vcores or a declared resource type, values whole numbers
//
// Records: type NAME UNITS KIND MIN MAX | node POOL NAME VALUE UNITS | prop FILE NAME VALUE |
//          known KEY true|false | vector NAME VALUE; then "ok COMMAND" after each command that
//          succeeded or "error COMMAND MESSAGE" for one that threw.
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.w3c.dom.NodeList;

public final class YarnConfProbe {
  // CapacitySchedulerConfiguration.PATTERN_FOR_ABSOLUTE_RESOURCE (Hadoop 3.x).
  private static final Pattern VECTOR = Pattern.compile("^\\[[\\w\\.,\\-_=\\ /]+\\]$");

  private YarnConfProbe() {}

  private static String clean(Object o) {
    return String.valueOf(o).replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
  }

  private static void out(String... fields) {
    List<String> cleaned = new ArrayList<>();
    for (String f : fields) {
      cleaned.add(clean(f));
    }
    System.out.println(String.join("\t", cleaned));
  }

  private static void printTypes(Map<String, ResourceInformation> types) {
    for (ResourceInformation ri : types.values()) {
      out("type", ri.getName(), ri.getUnits(), String.valueOf(ri.getResourceType()),
          Long.toString(ri.getMinimumAllocation()), Long.toString(ri.getMaximumAllocation()));
    }
  }

  /** Every property name in yarn-default.xml, including those without a default value. */
  private static Set<String> yarnDefaultNames() throws Exception {
    Set<String> names = new HashSet<>();
    try (InputStream in =
        YarnConfiguration.class.getClassLoader().getResourceAsStream("yarn-default.xml")) {
      if (in == null) {
        throw new IllegalStateException("yarn-default.xml not on the classpath");
      }
      javax.xml.parsers.DocumentBuilderFactory f =
          javax.xml.parsers.DocumentBuilderFactory.newInstance();
      NodeList list = f.newDocumentBuilder().parse(in).getElementsByTagName("name");
      for (int k = 0; k < list.getLength(); k++) {
        names.add(list.item(k).getTextContent().trim());
      }
    }
    return names;
  }

  public static void main(String[] args) throws Exception {
    Set<String> defaults = yarnDefaultNames();
    int i = 0;
    while (i < args.length) {
      String cmd = args[i++];
      try {
        switch (cmd) {
          case "types":
            printTypes(ResourceUtils.resetResourceTypes(new YarnConfiguration()));
            break;
          case "typesfile": {
            Configuration conf = new YarnConfiguration();
            conf.addResource(new Path(args[i++]));
            printTypes(ResourceUtils.resetResourceTypes(conf));
            break;
          }
          case "node": {
            String pool = args[i++];
            Configuration conf = new YarnConfiguration();
            conf.addResource(new Path(args[i++]));
            ResourceUtils.resetNodeResources();
            Map<String, ResourceInformation> info = ResourceUtils.getNodeResourceInformation(conf);
            Resource total = Resource.newInstance(0, 0);
            for (Map.Entry<String, ResourceInformation> e : info.entrySet()) {
              total.setResourceInformation(e.getKey(), e.getValue());
            }
            for (ResourceInformation ri : total.getResources()) {
              out("node", pool, ri.getName(), Long.toString(ri.getValue()), ri.getUnits());
            }
            break;
          }
          case "conf": {
            String file = args[i++];
            Configuration conf = new Configuration(false);
            conf.addResource(new Path(file));
            for (Map.Entry<String, String> e : conf) {
              out("prop", file, e.getKey(), e.getValue());
            }
            break;
          }
          case "known": {
            String key = args[i++];
            out("known", key, Boolean.toString(defaults.contains(key)));
            break;
          }
          case "vector": {
            String value = args[i++];
            Matcher m = VECTOR.matcher(value);
            if (!m.matches()) {
              throw new IllegalArgumentException("not an absolute resource vector: " + value);
            }
            Map<String, ResourceInformation> known = ResourceUtils.getResourceTypes();
            for (String pair : value.substring(1, value.length() - 1).split(",")) {
              String[] kv = pair.split("=");
              String name = kv[0];
              if (!name.equals("memory") && !name.equals("vcores") && !known.containsKey(name)) {
                throw new IllegalArgumentException("unknown resource " + name + " in " + value);
              }
              out("vector", name, Long.toString(Long.parseLong(kv[1])));
            }
            break;
          }
          default:
            throw new IllegalArgumentException("unknown command " + cmd);
        }
        out("ok", cmd);
      } catch (RuntimeException e) {
        out("error", cmd, e.getClass().getSimpleName() + ": " + e.getMessage());
      }
    }
  }
}
