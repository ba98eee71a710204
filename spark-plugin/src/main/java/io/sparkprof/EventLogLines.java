package io.sparkprof;

import java.util.Properties;
import org.apache.spark.SparkConf;
import org.apache.spark.scheduler.EventLoggingListener$;
import org.apache.spark.scheduler.SparkListenerBlockUpdated;
import org.apache.spark.scheduler.SparkListenerEnvironmentUpdate;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.scheduler.SparkListenerExecutorMetricsUpdate;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerLogStart;
import org.apache.spark.scheduler.SparkListenerSpeculativeTaskSubmitted;
import org.apache.spark.scheduler.SparkListenerStageExecutorMetrics;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerUnschedulableTaskSetAdded;
import org.apache.spark.scheduler.SparkListenerUnschedulableTaskSetRemoved;

/**
 * Listener events as the lines Spark's own event logger ({@code EventLoggingListener}) writes for
 * them: the same {@code JsonProtocol} call with the same options, the same redaction of the
 * environment and of job and stage properties. So the live model reads exactly what
 * {@code sparkprof analyze} would read in the event log, through the same parser.
 *
 * <p>Left out, so the live feed is a subsequence of the event log: the events the logger never
 * writes (speculative task submitted, unschedulable task sets, stage executor metrics), executor
 * metrics updates and block updates (written only under {@code spark.eventLog.logStageExecutorMetrics}
 * and {@code spark.eventLog.logBlockUpdates.enabled}; per heartbeat and per block, and nothing the
 * engine's figures need), and other events whose {@code logEvent} is false.
 */
final class EventLogLines {
  private final SparkConf conf;
  private final Object jsonOptions;

  EventLogLines(SparkConf conf) {
    this.conf = conf;
    this.jsonOptions = conf == null ? null : SparkCompat.jsonOptions(conf);
  }

  /** The first line of every event log. */
  String logStart(String sparkVersion) {
    return SparkCompat.eventJson(new SparkListenerLogStart(sparkVersion), jsonOptions);
  }

  /** Whether the event goes to the live model. */
  static boolean forwarded(SparkListenerEvent event) {
    if (event == null) return false;
    if (event instanceof SparkListenerExecutorMetricsUpdate
        || event instanceof SparkListenerBlockUpdated
        || event instanceof SparkListenerSpeculativeTaskSubmitted
        || event instanceof SparkListenerStageExecutorMetrics
        || event instanceof SparkListenerUnschedulableTaskSetAdded
        || event instanceof SparkListenerUnschedulableTaskSetRemoved) {
      return false;
    }
    return event.logEvent();
  }

  /** The event-log line of a forwarded event; null when it cannot be written safely. */
  String line(SparkListenerEvent event) {
    SparkListenerEvent logged = redacted(event);
    return logged == null ? null : SparkCompat.eventJson(logged, jsonOptions);
  }

  private SparkListenerEvent redacted(SparkListenerEvent event) {
    if (conf == null) return event;
    if (event instanceof SparkListenerEnvironmentUpdate) {
      return EventLoggingListener$.MODULE$.redactEvent(conf, (SparkListenerEnvironmentUpdate) event);
    }
    if (event instanceof SparkListenerStageSubmitted) {
      SparkListenerStageSubmitted submitted = (SparkListenerStageSubmitted) event;
      Properties properties = SparkCompat.redactProperties(conf, submitted.properties());
      return submitted.copy(submitted.stageInfo(), properties);
    }
    if (event instanceof SparkListenerJobStart) {
      SparkListenerJobStart start = (SparkListenerJobStart) event;
      Properties properties = SparkCompat.redactProperties(conf, start.properties());
      return SparkCompat.withProperties(start, properties);
    }
    return event;
  }
}
