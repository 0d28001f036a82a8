// Test harness: the high-availability mode Flink's own HighAvailabilityMode.fromConfig reads from
// each line of stdin set as high-availability.type (flink-dist on the classpath). Prints the enum
// name per line (NONE, ZOOKEEPER, KUBERNETES, FACTORY_CLASS), for tests/flink/test_flink_accepts.py.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.HighAvailabilityOptions;
import org.apache.flink.runtime.jobmanager.HighAvailabilityMode;

public final class HaModeProbe {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      Configuration conf = new Configuration();
      conf.set(HighAvailabilityOptions.HA_MODE, line);
      System.out.println(HighAvailabilityMode.fromConfig(conf).name());
    }
  }
}
