package io.sparkprof;

import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.status.AppHistoryServerPlugin;
import org.apache.spark.status.ElementTrackingStore;
import org.apache.spark.status.api.v1.ApplicationEnvironmentInfo;
import org.apache.spark.ui.SparkUI;
import scala.Tuple2;

/**
 * The sparkprof tab in Spark's History Server: Spark finds this class through {@code
 * META-INF/services/org.apache.spark.status.AppHistoryServerPlugin} when the plugin jar is on the
 * History Server's classpath, and calls {@link #setupUI} for every application UI it builds. The
 * tab shows the outputs the application's driver wrote ({@link HistoryUiSource}): today they are
 * in the driver's {@code spark.sparkprof.outputDir} ({@code <dir>/<appId>/}), which the History
 * Server reads from the application's environment in its event log; {@code
 * spark.sparkprof.history.outputDir} in the History Server's own configuration names a copy of
 * those directories (a shared mount) instead. See docs/spark-ui.md.
 *
 * <p>Scala 2.12 and 2.13 declare {@code createListeners} with different {@code Seq} types; the
 * {@code scala.collection.immutable.Seq} return here is the 2.13 method exactly and, through the
 * bridge javac writes, the 2.12 one.
 */
public final class SparkProfHistoryPlugin implements AppHistoryServerPlugin {
  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public scala.collection.immutable.Seq<SparkListener> createListeners(SparkConf conf,
      ElementTrackingStore store) {
    return (scala.collection.immutable.Seq) scala.collection.immutable.Nil$.MODULE$;
  }

  @Override
  public void setupUI(SparkUI ui) {
    try {
      SparkConf conf = ui.conf();
      if (!SparkProfConfig.from(conf).uiEnabled()) return;
      String appId = applicationId(ui);
      Map<String, String> properties = environment(ui, "sparkProperties");
      Map<String, String> system = environment(ui, "systemProperties");
      List<String> searched = new ArrayList<>();
      File found = null;
      for (String base : candidates(conf, properties, system)) {
        File directory = new File(base, safeName(appId));
        searched.add(directory.getPath());
        if (found == null && hasOutputs(directory)) found = directory;
      }
      SparkUiAttachment.attach(ui, new SparkProfUi(new HistoryUiSource(found, searched),
          "history"));
    } catch (RuntimeException | LinkageError e) {
      Log.warn("history server: no sparkprof tab for this application: " + e);
    }
  }

  /**
   * Where the driver may have written: the History Server's setting, the application's own, the
   * default.
   */
  static List<String> candidates(SparkConf conf, Map<String, String> properties,
      Map<String, String> system) {
    List<String> bases = new ArrayList<>();
    String configured = conf.get(SparkProfConfig.HISTORY_OUTPUT_DIR, "");
    if (!configured.isEmpty()) bases.add(configured);
    String own = properties.get(SparkProfConfig.OUTPUT_DIR);
    if (own != null && !own.isEmpty()) bases.add(own);
    String user = system.get("user.name");
    // The driver's default (SparkProfConfig.defaultOutputDir), for the driver's user.
    if (own == null && user != null && !user.isEmpty() && !user.equals(".")
        && !user.equals("..")) {
      bases.add("/tmp/sparkprof-" + safeName(user));
    }
    return bases;
  }

  /** As the driver names an application's directory (characters beyond [A-Za-z0-9._-] become _). */
  static String safeName(String appId) {
    StringBuilder out = new StringBuilder(appId.length());
    for (int i = 0; i < appId.length(); i++) {
      char c = appId.charAt(i);
      boolean keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '.' || c == '_' || c == '-';
      out.append(keep ? c : '_');
    }
    return out.toString();
  }

  private static boolean hasOutputs(File directory) {
    if (new File(directory, "report.json").isFile()) return true;
    String[] names = directory.list();
    if (names == null) return false;
    for (String name : names) {
      if (name.startsWith("stage-") && name.endsWith(".html")) return true;
    }
    return false;
  }

  private static String applicationId(SparkUI ui) {
    try {
      String id = ui.store().applicationInfo().id();
      if (id != null && !id.isEmpty()) return id;
    } catch (RuntimeException | LinkageError e) {
      // below
    }
    String id = ui.appId();
    return id == null ? "" : id;
  }

  /**
   * One of the environment's property lists; its {@code Seq} type differs between Scala 2.12 and
   * 2.13, so the accessor is called by name and the result read as a {@code scala.collection.
   * Iterable} (the same in both).
   */
  private static Map<String, String> environment(SparkUI ui, String which) {
    Map<String, String> properties = new LinkedHashMap<>();
    try {
      ApplicationEnvironmentInfo info = ui.store().environmentInfo();
      Object list = ApplicationEnvironmentInfo.class.getMethod(which).invoke(info);
      scala.collection.Iterator<?> pairs = ((scala.collection.Iterable<?>) list).iterator();
      while (pairs.hasNext()) {
        Tuple2<?, ?> pair = (Tuple2<?, ?>) pairs.next();
        properties.put(String.valueOf(pair._1()), String.valueOf(pair._2()));
      }
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      // No environment (an event log without it): the History Server's own setting only.
    }
    return properties;
  }
}
