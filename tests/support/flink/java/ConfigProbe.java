/*
 * Configuration probe used by the accelplane test harness
 * (tests/support/flink/config_probe.py: probe_flink_config / load_with_flink).
 *
 * Usage: java -cp <probe.jar>:<flink>/lib/* ConfigProbe <confDir> [listKey ...]
 *
 * Loads <confDir> with Flink's own GlobalConfiguration.loadConfiguration(confDir)
 * -- exactly what JobManager, TaskManager and the CLI do -- and prints ONE line
 *
 *   CONFIGPROBE_JSON={"standardYaml":<bool>,"file":"<name>","values":{...},"lists":{...}}
 *
 * values: Configuration.toMap() with sorted keys (every value as the string
 *         Flink itself would hand to a ConfigOption parser).
 * lists:  for every listKey given on the command line, the value parsed as
 *         ConfigOptions.key(listKey).stringType().asList() -- the way Flink
 *         reads e.g. "external-resources" -- or {"error": "..."} when Flink
 *         cannot parse it, or null when the key is absent.
 *
 * Only the JSON line matters; logging may print other lines.
 */

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;

public class ConfigProbe {

    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: ConfigProbe <confDir> [listKey ...]");
            System.exit(2);
        }
        Configuration conf = GlobalConfiguration.loadConfiguration(args[0]);

        StringBuilder out = new StringBuilder();
        out.append("{\"standardYaml\":").append(GlobalConfiguration.isStandardYaml());
        out.append(",\"file\":");
        quote(out, GlobalConfiguration.getFlinkConfFilename());

        out.append(",\"values\":{");
        boolean first = true;
        for (Map.Entry<String, String> e : new TreeMap<>(conf.toMap()).entrySet()) {
            if (!first) {
                out.append(',');
            }
            first = false;
            quote(out, e.getKey());
            out.append(':');
            quote(out, e.getValue());
        }
        out.append("},\"lists\":{");
        for (int i = 1; i < args.length; i++) {
            if (i > 1) {
                out.append(',');
            }
            quote(out, args[i]);
            out.append(':');
            ConfigOption<List<String>> option =
                    ConfigOptions.key(args[i]).stringType().asList().noDefaultValue();
            try {
                Optional<List<String>> value = conf.getOptional(option);
                if (value.isPresent()) {
                    out.append('[');
                    boolean firstItem = true;
                    for (String item : value.get()) {
                        if (!firstItem) {
                            out.append(',');
                        }
                        firstItem = false;
                        quote(out, item);
                    }
                    out.append(']');
                } else {
                    out.append("null");
                }
            } catch (RuntimeException ex) {
                out.append("{\"error\":");
                quote(out, ex.toString());
                out.append('}');
            }
        }
        out.append("}}");
        System.out.println("CONFIGPROBE_JSON=" + out);
    }

    private static void quote(StringBuilder out, String s) {
        if (s == null) {
            out.append("null");
            return;
        }
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                default:
                    if (c < 0x20 || c >= 0x7f) { // ASCII-only output, whatever the JVM's charset
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }
}
