package io.sparkprof;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
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
 * tab shows the outputs the application's driver wrote ({@link HistoryUiSource}): first the
 * folder it stored beside the event log ({@link EventLogDirOutputs}: {@code
 * <spark.history.fs.logDirectory>/<appId>.sparkprof/}, then under the application's own {@code
 * spark.eventLog.dir}), read through Hadoop's FileSystem as the History Server reads the logs;
 * then the local directories: {@code spark.sparkprof.history.outputDir} in the History Server's
 * own configuration (a copy of the drivers' directories, a shared mount), the driver's {@code
 * spark.sparkprof.outputDir} from the application's environment, the driver's default. See
 * docs/spark-ui.md.
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
      FileSystem foundFs = null;
      Path found = null;
      // Beside the event log first (through Hadoop's FileSystem: hdfs, s3a, ... as the History
      // Server reads the logs), then the local directories.
      Configuration hadoop = null;
      for (String logDir : eventLogDirectories(conf, properties)) {
        Path folder = EventLogDirOutputs.folder(logDir, appId, attemptId(ui));
        if (folder == null) continue;
        searched.add(HistoryUiSource.displayed(folder));
        if (found != null) continue;
        try {
          if (hadoop == null) hadoop = hadoopConfiguration(conf);
          FileSystem fs = EventLogDirOutputs.fileSystem(folder, hadoop);
          if (HistoryUiSource.hasOutputs(fs, folder)) {
            foundFs = fs;
            found = folder;
          }
        } catch (IOException | RuntimeException e) {
          // that file system is not available here (no hadoop-aws, no credentials): next
        }
      }
      FileSystem local = HistoryUiSource.localFileSystem();
      for (String base : candidates(conf, properties, system)) {
        File directory = new File(base, safeName(appId));
        searched.add(directory.getPath());
        if (found != null || local == null) continue;
        Path path = new Path(directory.getAbsoluteFile().toURI());
        if (HistoryUiSource.hasOutputs(local, path)) {
          foundFs = local;
          found = path;
        }
      }
      // Without a profile, the event log's analysis, made when a page first asks for it.
      HistoryEventLogAnalysis eventLog = null;
      if (found == null) {
        if (hadoop == null) hadoop = hadoopConfiguration(conf);
        eventLog = new HistoryEventLogAnalysis(hadoop, eventLogDirectories(conf, properties),
            appId, attemptId(ui), SparkProfConfig.from(conf));
      }
      SparkUiAttachment.attach(ui, new SparkProfUi(
          new HistoryUiSource(foundFs, found, searched, eventLog), "history"));
    } catch (RuntimeException | LinkageError e) {
      Log.warn("history server: no sparkprof tab for this application: " + e);
    }
  }

  /**
   * Where the application's event log is: the History Server's {@code
   * spark.history.fs.logDirectory} (as this server reaches it), then the application's own
   * {@code spark.eventLog.dir} when it names another place.
   */
  static List<String> eventLogDirectories(SparkConf conf, Map<String, String> properties) {
    List<String> directories = new ArrayList<>();
    String history = conf.get("spark.history.fs.logDirectory", "file:/tmp/spark-events");
    directories.add(history);
    String own = properties.get("spark.eventLog.dir");
    if (own != null && !own.trim().isEmpty()) {
      java.net.URI ownUri = EventLogDirOutputs.resolveDirectory(own);
      java.net.URI historyUri = EventLogDirOutputs.resolveDirectory(history);
      if (ownUri != null && !ownUri.equals(historyUri)) directories.add(own);
    }
    return directories;
  }

  /**
   * The History Server's Hadoop configuration as Spark builds it for reading the logs ({@code
   * SparkHadoopUtil.newConfiguration}: {@code spark.hadoop.*}, the environment's AWS keys); when
   * that is not reachable, Hadoop's defaults with the {@code spark.hadoop.*} keys.
   */
  static Configuration hadoopConfiguration(SparkConf conf) {
    try {
      Class<?> util = Class.forName("org.apache.spark.deploy.SparkHadoopUtil");
      Object instance = util.getMethod("get").invoke(null);
      Object made = util.getMethod("newConfiguration", SparkConf.class).invoke(instance, conf);
      if (made instanceof Configuration) return (Configuration) made;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      // below
    }
    Configuration hadoop = new Configuration();
    for (Tuple2<String, String> pair : conf.getAll()) {
      if (pair._1().startsWith("spark.hadoop.")) {
        hadoop.set(pair._1().substring("spark.hadoop.".length()), pair._2());
      }
    }
    return hadoop;
  }

  /** The UI's attempt id (cluster mode on YARN), or null. */
  private static String attemptId(SparkUI ui) {
    try {
      Object attempts = org.apache.spark.status.api.v1.ApplicationInfo.class.getMethod("attempts")
          .invoke(ui.store().applicationInfo());
      scala.collection.Iterator<?> it = ((scala.collection.Iterable<?>) attempts).iterator();
      if (!it.hasNext()) return null;
      Object attempt = it.next();
      scala.Option<?> id = (scala.Option<?>) attempt.getClass().getMethod("attemptId")
          .invoke(attempt);
      return id.isDefined() ? String.valueOf(id.get()) : null;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return null;
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
