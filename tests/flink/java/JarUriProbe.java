// Test harness: whether java.net.URI (what Flink and its Kubernetes operator parse job.jarURI with)
// accepts each line of stdin. Prints "ok" or "error" per line, in order, for
// tests/flink/test_flink_accepts.py. Run as a single-file program: java JarUriProbe.java < lines
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;

public final class JarUriProbe {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      try {
        new URI(line);
        System.out.println("ok");
      } catch (URISyntaxException e) {
        System.out.println("error");
      }
    }
  }
}
