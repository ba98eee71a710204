package io.sparkprof;

import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.StageInfo;

/**
 * Spark listener events for the driver plugin. For now only stage completion (it triggers the
 * stage's flame graph); the bridge to the engine's typed events is still to come. Runs on Spark's
 * listener thread and never throws.
 */
final class SparkProfListener extends SparkListener {
  private final SparkProfDriverPlugin plugin;

  SparkProfListener(SparkProfDriverPlugin plugin) {
    this.plugin = plugin;
  }

  @Override
  public void onStageCompleted(SparkListenerStageCompleted stageCompleted) {
    try {
      StageInfo info = stageCompleted.stageInfo();
      plugin.onStageCompleted(info.stageId(), info.attemptNumber());
    } catch (RuntimeException | LinkageError e) {
      // A listener that throws is logged by Spark for every event; stay quiet instead.
    }
  }
}
