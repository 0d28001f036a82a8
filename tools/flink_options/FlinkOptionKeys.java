// Lists every ConfigOption key of a Flink distribution with its fallback and deprecated keys, as
// Flink itself declares them: loads each class of the given flink-dist jar, reads every static
// field of type org.apache.flink.configuration.ConfigOption by reflection and prints
//
//   key <TAB> fallback keys (comma-separated, Flink's order) <TAB> deprecated keys (same)
//
// one line per key, sorted, keys declared by several classes merged. Compiled without Flink on the
// classpath (everything by reflection), so one build reads every Flink version.
// Usage: java tools/flink_options/FlinkOptionKeys.java path/to/flink-dist-X.Y.Z.jar > out.tsv
// (tools/flink_options/extract.py runs it per version and writes the committed tables.)
import java.io.File;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

public final class FlinkOptionKeys {
  private FlinkOptionKeys() {}

  public static void main(String[] args) throws Exception {
    File jar = new File(args[0]);
    URLClassLoader loader =
        new URLClassLoader(new URL[] {jar.toURI().toURL()}, ClassLoader.getPlatformClassLoader());
    Class<?> option = loader.loadClass("org.apache.flink.configuration.ConfigOption");
    Class<?> fallback = loader.loadClass("org.apache.flink.configuration.FallbackKey");
    Method key = option.getMethod("key");
    Method fallbackKeys = option.getMethod("fallbackKeys");
    Method fallbackKey = fallback.getMethod("getKey");
    Method isDeprecated = fallback.getMethod("isDeprecated");
    Map<String, LinkedHashSet<String>[]> out = new TreeMap<>();
    List<String> names = new ArrayList<>();
    try (JarFile jf = new JarFile(jar)) {
      for (Enumeration<JarEntry> e = jf.entries(); e.hasMoreElements(); ) {
        String n = e.nextElement().getName();
        if (n.startsWith("org/apache/flink/") && n.endsWith(".class") && !n.contains("/shaded/")) {
          names.add(n.substring(0, n.length() - 6).replace('/', '.'));
        }
      }
    }
    int classes = 0;
    for (String name : names) {
      Field[] fields;
      try {
        fields = Class.forName(name, false, loader).getDeclaredFields();
      } catch (Throwable t) { // optional dependencies of unrelated classes are not in flink-dist
        continue;
      }
      boolean any = false;
      for (Field f : fields) {
        if (!Modifier.isStatic(f.getModifiers()) || !option.isAssignableFrom(f.getType())) {
          continue;
        }
        Object o;
        try {
          f.setAccessible(true);
          o = f.get(null);
        } catch (Throwable t) {
          continue;
        }
        if (o == null) {
          continue;
        }
        any = true;
        String k = (String) key.invoke(o);
        @SuppressWarnings("unchecked")
        LinkedHashSet<String>[] lists =
            out.computeIfAbsent(k, x -> new LinkedHashSet[] {new LinkedHashSet<>(), new LinkedHashSet<>()});
        for (Object fb : (Iterable<?>) fallbackKeys.invoke(o)) {
          String fk = (String) fallbackKey.invoke(fb);
          lists[(Boolean) isDeprecated.invoke(fb) ? 1 : 0].add(fk);
        }
      }
      if (any) {
        classes++;
      }
    }
    for (Map.Entry<String, LinkedHashSet<String>[]> e : out.entrySet()) {
      System.out.println(
          e.getKey() + "\t" + String.join(",", e.getValue()[0]) + "\t" + String.join(",", e.getValue()[1]));
    }
    System.err.println(out.size() + " options in " + classes + " classes");
    System.exit(0);
  }
}
