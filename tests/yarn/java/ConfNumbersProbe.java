// Test harness: reads numbers from a Hadoop configuration file the way Hadoop's daemons do, with
// Configuration.getInt / getLong (hadoop-client-api from PyPI pyspark), for
// tests/yarn/test_yarn_numbers.py.
//
// Usage: ConfNumbersProbe FILE (int|long KEY)...
// Prints one tab-separated record per KEY: "KEY value N" or "KEY error EXCEPTION-CLASS".
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

public final class ConfNumbersProbe {
  public static void main(String[] args) {
    Configuration conf = new Configuration(false);
    conf.addResource(new Path(args[0]));
    for (int i = 1; i + 1 < args.length; i += 2) {
      String key = args[i + 1];
      try {
        long value = args[i].equals("int") ? conf.getInt(key, -1) : conf.getLong(key, -1L);
        System.out.println(key + "\tvalue\t" + value);
      } catch (RuntimeException e) {
        System.out.println(key + "\terror\t" + e.getClass().getName());
      }
    }
  }
}
