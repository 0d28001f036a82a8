// Test harness: loads accelplane's rendered YARN files with Hadoop's own classes (the
// hadoop-client-api/-runtime jars that PyPI pyspark ships) and prints what Hadoop understood, one
// tab-separated record per line, for tests/yarn/test_hadoop.py to compare with the spec.
//
// Commands (any number, processed in order; a failing command prints an "error" record and the
// next command still runs):
//   types                 resource types via ResourceUtils (resource-types.xml from the classpath,
//                         exactly as the ResourceManager and NodeManagers find it)
//   maxalloc RMSITE       the scheduler's maximum allocation as the ResourceManager computes it
//                         (ResourceUtils.fetchMaximumAllocationFromConfig, what the
//                         CapacityScheduler uses) from yarn-default.xml, resource-types.xml on the
//                         classpath and the yarn-site fragment RMSITE ("-": none), with the
//                         memory-mb/vcores maxima of the resource types read from the same conf
//   typesfile FILE        resource types from FILE (for negative tests)
//   node POOL FILE        node-resources FILE via ResourceUtils.getNodeResourceInformation, put into
//                         a Resource like NodeManagerHardwareUtils.getNodeResources does (undeclared
//                         types throw ResourceNotFoundException)
//   conf FILE             every property of FILE as Hadoop's Configuration parser reads it
//   amfloat FILE KEY      KEY of FILE read with Configuration.getFloat(KEY, 0.1f), as the
//                         CapacityScheduler reads maximum-am-resource-percent
//   known KEY             whether yarn-default.xml of this Hadoop (in hadoop-client-api) names KEY
//   vector VALUE          a CapacityScheduler absolute resource vector: names must be memory,
//                         vcores or a declared resource type, values whole numbers
//   labelsrm RMSITE STORE starts Hadoop's CommonNodeLabelsManager with the ResourceManager's
//                         yarn-site fragment RMSITE (node labels must be enabled there), its label
//                         store in directory STORE
//   labels ARG            ARG as `yarn rmadmin -addToClusterNodeLabels` parses it
//                         (YarnClientUtils.buildNodeLabelsFromStr), added to the manager (which
//                         checks every name, NodeLabelUtil.checkAndThrowLabelName)
//   partition POOL FILE   the partition a NodeManager with yarn-site fragment FILE reports
//                         (yarn.nodemanager.node-labels.provider=config and
//                         ...provider.configured-node-partition), put on a node of POOL with the
//                         manager's replaceLabelsOnNode (throws for a label the cluster lacks)
//
// Records: type NAME UNITS KIND MIN MAX | node POOL NAME VALUE UNITS | prop FILE NAME VALUE |
//          maxalloc RMSITE MEMORY-MB VCORES TYPE-MEMORY-MB TYPE-VCORES | known KEY true|false | amfloat KEY VALUE | vector NAME VALUE | labelsrm ENABLED CONFTYPE |
//          label NAME EXCLUSIVE | partition POOL PROVIDER LABEL | nodelabels POOL LABEL...; then "ok COMMAND" after each command that
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
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeLabel;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.client.util.YarnClientUtils;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.nodelabels.CommonNodeLabelsManager;
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

  private static CommonNodeLabelsManager labels;

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
          case "maxalloc": {
            // the ResourceManager's view: yarn-default.xml and resource-types.xml from the classpath,
            // the rendered ResourceManager yarn-site fragment (or "-" for none) added on top
            Configuration conf = new YarnConfiguration();
            String site = args[i++];
            if (!site.equals("-")) {
              conf.addResource(new Path(site));
            }
            Map<String, ResourceInformation> types = ResourceUtils.resetResourceTypes(conf);
            Resource max = ResourceUtils.fetchMaximumAllocationFromConfig(conf);
            out("maxalloc", site, Long.toString(max.getMemorySize()), Integer.toString(max.getVirtualCores()),
                Long.toString(types.get("memory-mb").getMaximumAllocation()),
                Long.toString(types.get("vcores").getMaximumAllocation()));
            break;
          }
          case "nmoffer": {
            // a NodeManager's view of what it offers containers: yarn-default.xml from the classpath,
            // the rendered pool's yarn-site fragment (or "-" for none) on top; Hadoop's keys and
            // the defaults NodeManagerHardwareUtils falls back to for -1 without hardware detection
            Configuration conf = new YarnConfiguration();
            String site = args[i++];
            if (!site.equals("-")) {
              conf.addResource(new Path(site));
            }
            out("nmoffer", site, YarnConfiguration.NM_PMEM_MB, Integer.toString(conf.getInt(YarnConfiguration.NM_PMEM_MB, YarnConfiguration.DEFAULT_NM_PMEM_MB)),
                YarnConfiguration.NM_VCORES, Integer.toString(conf.getInt(YarnConfiguration.NM_VCORES, YarnConfiguration.DEFAULT_NM_VCORES)),
                Integer.toString(YarnConfiguration.DEFAULT_NM_PMEM_MB), Integer.toString(YarnConfiguration.DEFAULT_NM_VCORES),
                Boolean.toString(conf.getBoolean(YarnConfiguration.NM_ENABLE_HARDWARE_CAPABILITY_DETECTION,
                    YarnConfiguration.DEFAULT_NM_ENABLE_HARDWARE_CAPABILITY_DETECTION)));
            break;
          }
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
          case "amfloat": {
            // a maximum-am-resource-percent as the CapacityScheduler reads it: Configuration.getFloat
            // with the global default 0.1 (CapacitySchedulerConfiguration
            // .getMaximumApplicationMasterResourcePerQueuePercent, :545-548 in Hadoop 3.4.1)
            String file = args[i++];
            String key = args[i++];
            Configuration conf = new Configuration(false);
            conf.addResource(new Path(file));
            out("amfloat", key, Float.toString(conf.getFloat(key, 0.1f)));
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
          case "labelsrm": {
            Configuration conf = new YarnConfiguration();
            conf.addResource(new Path(args[i++]));
            conf.set(YarnConfiguration.FS_NODE_LABELS_STORE_ROOT_DIR, "file://" + args[i++]);
            out("labelsrm", Boolean.toString(YarnConfiguration.areNodeLabelsEnabled(conf)),
                conf.get(YarnConfiguration.NODELABEL_CONFIGURATION_TYPE, ""));
            labels = new CommonNodeLabelsManager();
            labels.init(conf);
            labels.start();
            break;
          }
          case "labels": {
            List<NodeLabel> parsed = YarnClientUtils.buildNodeLabelsFromStr(args[i++]);
            labels.addToCluserNodeLabels(parsed);
            for (NodeLabel l : parsed) {
              out("label", l.getName(), Boolean.toString(l.isExclusive()));
            }
            break;
          }
          case "partition": {
            String pool = args[i++];
            Configuration conf = new Configuration(false);
            conf.addResource(new Path(args[i++]));
            String provider = conf.get(YarnConfiguration.NM_NODE_LABELS_PROVIDER_CONFIG, "");
            String label = conf.get(YarnConfiguration.NM_PROVIDER_CONFIGURED_NODE_PARTITION, "");
            out("partition", pool, provider, label);
            NodeId node = NodeId.newInstance(pool + "-node.example.internal", 0);
            Map<NodeId, Set<String>> mapping = new java.util.HashMap<>();
            mapping.put(node, label.isEmpty() ? new HashSet<>() : new HashSet<>(List.of(label)));
            labels.replaceLabelsOnNode(mapping);
            List<String> got = new ArrayList<>();
            for (NodeLabel l : labels.getLabelsInfoByNode(node)) {
              got.add(l.getName());
            }
            List<String> record = new ArrayList<>(List.of("nodelabels", pool));
            record.addAll(got);
            out(record.toArray(new String[0]));
            break;
          }
          default:
            throw new IllegalArgumentException("unknown command " + cmd);
        }
        out("ok", cmd);
      } catch (RuntimeException | java.io.IOException e) {
        out("error", cmd, e.getClass().getSimpleName() + ": " + e.getMessage());
      }
    }
    if (labels != null) {
      labels.stop();
    }
    System.out.flush();
    System.exit(0); // the label manager's dispatcher thread would keep the JVM alive
  }
}
