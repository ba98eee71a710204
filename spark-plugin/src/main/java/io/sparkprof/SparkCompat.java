package io.sparkprof;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.scheduler.SparkListenerInterface;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.util.JsonProtocol;
import org.apache.spark.util.Utils;
import scala.Tuple2;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * The Spark calls whose bytecode differs between the Spark releases the one jar supports, each
 * resolved once by reflection; every other call in the plugin links directly. Tests run on each
 * supported release ({@code tests/plugin}).
 *
 * <ul>
 *   <li>{@code JsonProtocol.sparkEventToJsonString(event, JsonProtocolOptions)}: Spark 4 only; its
 *       event logger passes options built from the SparkConf, 3.5 has the one-argument form.
 *   <li>{@code Utils.redact(conf, Seq)}: the conf parameter is {@code SparkConf} in 3.5 and
 *       {@code ReadOnlySparkConf} in 4.
 *   <li>{@code SparkListenerJobStart}'s constructor: its {@code Seq} is {@code scala.collection.Seq}
 *       under Scala 2.12 and {@code scala.collection.immutable.Seq} under 2.13.
 * </ul>
 *
 * <p>One Spark-internal call links directly, with a fallback should a release drop it:
 * {@link #addListener}.
 *
 * <p>All fields are resolved in the static initializer; a member that cannot be found leaves its
 * field null and the caller uses the documented fallback, so no method here throws a linkage error.
 */
final class SparkCompat {
  private static final Method JSON_WITH_OPTIONS;
  private static final Constructor<?> JSON_OPTIONS;
  private static final Method REDACT;
  private static final Constructor<?> JOB_START;
  private static final Method JOB_STAGE_INFOS;

  static {
    Method jsonWithOptions = null;
    Constructor<?> jsonOptions = null;
    try {
      Class<?> optionsClass = Class.forName("org.apache.spark.util.JsonProtocolOptions", false,
          JsonProtocol.class.getClassLoader());
      jsonOptions = optionsClass.getConstructor(SparkConf.class);
      jsonWithOptions = JsonProtocol.class.getMethod("sparkEventToJsonString",
          SparkListenerEvent.class, optionsClass);
    } catch (ReflectiveOperationException | LinkageError e) {
      jsonWithOptions = null;  // Spark 3.5: the one-argument form is what its event logger calls
      jsonOptions = null;
    }
    JSON_WITH_OPTIONS = jsonWithOptions;
    JSON_OPTIONS = jsonOptions;

    Method redact = null;
    for (Method method : Utils.class.getMethods()) {
      Class<?>[] parameters = method.getParameterTypes();
      if (method.getName().equals("redact") && parameters.length == 2
          && parameters[0].isAssignableFrom(SparkConf.class) && parameters[1] == Seq.class) {
        redact = method;
      }
    }
    REDACT = redact;

    Constructor<?> jobStart = null;
    for (Constructor<?> constructor : SparkListenerJobStart.class.getConstructors()) {
      Class<?>[] parameters = constructor.getParameterTypes();
      if (parameters.length == 4 && parameters[0] == int.class && parameters[1] == long.class
          && parameters[3] == Properties.class) {
        jobStart = constructor;
      }
    }
    JOB_START = jobStart;
    Method stageInfos = null;
    try {
      stageInfos = SparkListenerJobStart.class.getMethod("stageInfos");
    } catch (ReflectiveOperationException | LinkageError e) {
      stageInfos = null;
    }
    JOB_STAGE_INFOS = stageInfos;
  }

  private SparkCompat() {}

  /** The listener-bus queue of sparkprof's listeners. */
  static final String LISTENER_QUEUE = "sparkprof";

  /**
   * Registers {@code listener} on a listener-bus queue of its own ({@code LiveListenerBus.
   * addToQueue}, Spark-internal but the same in 3.5 and 4): the JSON lines and hand-offs run on
   * that queue's thread, so they never delay the other listeners of the shared queue, nor make
   * Spark drop their events when it fills. Where that call is missing, the shared queue
   * ({@code addSparkListener}). True when the own queue took it.
   */
  static boolean addListener(SparkContext sc, SparkListenerInterface listener) {
    try {
      sc.listenerBus().addToQueue(listener, LISTENER_QUEUE);
      return true;
    } catch (RuntimeException | LinkageError e) {
      sc.addSparkListener(listener);
      return false;
    }
  }

  /** What the event logger passes to JsonProtocol with {@code conf}: null on Spark 3.5. */
  static Object jsonOptions(SparkConf conf) {
    if (JSON_OPTIONS == null) return null;
    try {
      return JSON_OPTIONS.newInstance(conf);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /** The event's line as Spark's event logger writes it (with the options it would use). */
  static String eventJson(SparkListenerEvent event, Object jsonOptions) {
    if (JSON_WITH_OPTIONS != null && jsonOptions != null) {
      try {
        return (String) JSON_WITH_OPTIONS.invoke(null, event, jsonOptions);
      } catch (ReflectiveOperationException e) {
        Throwable cause = e.getCause();
        if (cause instanceof RuntimeException) throw (RuntimeException) cause;
        throw new IllegalStateException(cause != null ? cause : e);
      }
    }
    return JsonProtocol.sparkEventToJsonString(event);
  }

  /**
   * Job and stage properties as the event logger writes them: values of keys that are also in the
   * SparkConf go through {@code Utils.redact} (the {@code spark.redaction.regex} rule); local
   * properties (descriptions, SQL execution ids) stay. Without the method every conf value is
   * replaced, so nothing secret ever leaves.
   */
  @SuppressWarnings("deprecation")  // JavaConverters: the one converter with 2.12 = 2.13 bytecode
  static Properties redactProperties(SparkConf conf, Properties properties) {
    if (properties == null || conf == null) return properties;
    // The order of EventLoggingListener.redactProperties: redacted conf keys, then local ones.
    List<Tuple2<String, String>> global = new ArrayList<>();
    List<Tuple2<String, String>> local = new ArrayList<>();
    for (Map.Entry<Object, Object> entry : properties.entrySet()) {
      if (!(entry.getKey() instanceof String) || !(entry.getValue() instanceof String)) continue;
      Tuple2<String, String> pair = new Tuple2<>((String) entry.getKey(), (String) entry.getValue());
      (conf.contains(pair._1()) ? global : local).add(pair);
    }
    Properties redacted = new Properties();
    Object result = null;
    if (REDACT != null && !global.isEmpty()) {
      try {
        result = REDACT.invoke(null, conf, JavaConverters.asScalaBuffer(global));
      } catch (ReflectiveOperationException | RuntimeException e) {
        result = null;
      }
    }
    if (result instanceof Seq) {
      for (Object pair : JavaConverters.seqAsJavaList((Seq<?>) result)) {
        Tuple2<?, ?> tuple = (Tuple2<?, ?>) pair;
        redacted.setProperty(String.valueOf(tuple._1()), String.valueOf(tuple._2()));
      }
    } else {
      for (Tuple2<String, String> pair : global) redacted.setProperty(pair._1(), REDACTED);
    }
    for (Tuple2<String, String> pair : local) redacted.setProperty(pair._1(), pair._2());
    return redacted;
  }

  /** Spark's replacement text for a redacted value. */
  static final String REDACTED = "*********(redacted)";

  /** The job start with other properties; null when this Spark's constructor is unknown. */
  static SparkListenerJobStart withProperties(SparkListenerJobStart event, Properties properties) {
    if (JOB_START == null || JOB_STAGE_INFOS == null) return null;
    try {
      return (SparkListenerJobStart) JOB_START.newInstance(event.jobId(), event.time(),
          JOB_STAGE_INFOS.invoke(event), properties);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /** For tests: which members resolved on this Spark. */
  static String describe() {
    return "jsonOptions=" + (JSON_WITH_OPTIONS != null) + " redact=" + (REDACT != null)
        + " jobStart=" + (JOB_START != null && JOB_STAGE_INFOS != null);
  }
}
