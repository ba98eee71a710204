package io.sparkprof;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerApplicationStart;
import org.apache.spark.scheduler.SparkListenerEnvironmentUpdate;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.apache.spark.scheduler.StageInfo;

/**
 * The listener bridge: every event the engine reads becomes the JSON line Spark's event log has
 * for it ({@link EventJson}) and goes to the native live model ({@link
 * NativeAggregator#onEvent}), which runs it through the same parser and model builder as
 * {@code sparkprof analyze}. Stage completion also schedules the stage's flame graph, and the
 * application's end writes the report.
 *
 * <p>Runs on Spark's listener thread: never throws (a failing event is counted and the first
 * failure logged once), never blocks beyond the native model's lock.
 */
final class SparkProfListener extends SparkListener {
  /** Where the lines go: the native model in production, a list in tests. */
  interface Sink {
    void accept(String jsonLine);
  }

  private final SparkProfDriverPlugin plugin;
  private final Sink sink;
  private final AtomicLong failures = new AtomicLong();
  private volatile boolean failureLogged;

  SparkProfListener(SparkProfDriverPlugin plugin, Sink sink) {
    this.plugin = plugin;
    this.sink = sink;
  }

  @Override
  public void onApplicationStart(SparkListenerApplicationStart event) {
    try {
      sink.accept(EventJson.applicationStart(event));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  @Override
  public void onApplicationEnd(SparkListenerApplicationEnd event) {
    try {
      sink.accept(EventJson.applicationEnd(event));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
    if (plugin != null) plugin.onApplicationEnd();
  }

  @Override
  public void onEnvironmentUpdate(SparkListenerEnvironmentUpdate event) {
    try {
      sink.accept(EventJson.environmentUpdate(event));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  @Override
  public void onExecutorAdded(SparkListenerExecutorAdded event) {
    try {
      sink.accept(EventJson.executorAdded(event));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  @Override
  public void onExecutorRemoved(SparkListenerExecutorRemoved event) {
    try {
      sink.accept(EventJson.executorRemoved(event));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  @Override
  public void onJobStart(SparkListenerJobStart event) {
    try {
      sink.accept(EventJson.jobStart(event));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  @Override
  public void onJobEnd(SparkListenerJobEnd event) {
    try {
      sink.accept(EventJson.jobEnd(event));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  @Override
  public void onStageSubmitted(SparkListenerStageSubmitted event) {
    try {
      sink.accept(EventJson.stageSubmitted(event));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  @Override
  public void onStageCompleted(SparkListenerStageCompleted event) {
    try {
      sink.accept(EventJson.stageCompleted(event));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
    try {
      StageInfo info = event.stageInfo();
      if (plugin != null && info != null) plugin.onStageCompleted(info.stageId(), info.attemptNumber());
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  @Override
  public void onTaskStart(SparkListenerTaskStart event) {
    try {
      sink.accept(EventJson.taskStart(event));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd event) {
    try {
      sink.accept(EventJson.taskEnd(event));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  /** SQL executions (spark-sql) arrive here; other events are not forwarded. */
  @Override
  public void onOtherEvent(SparkListenerEvent event) {
    try {
      if (event == null) return;
      String line = EventJson.otherEvent(event);
      if (line != null) sink.accept(line);
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  /** Events that could not be turned into a line (null members Spark never sends, bugs). */
  long failures() {
    return failures.get();
  }

  private void failed(Throwable e) {
    failures.incrementAndGet();
    if (failureLogged) return;
    failureLogged = true;
    SparkProfPlugin.log("a listener event was not recorded (further failures are counted, not "
        + "logged): " + e);
  }
}
