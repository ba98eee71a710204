package org.apache.spark.api.plugin;

import java.util.Map;
import org.apache.spark.TaskFailedReason;

/** Compile-only declaration (Spark 3.0+, task hooks 3.1+; identical in 3.5 and 4.0). */
public interface ExecutorPlugin {
  default void init(PluginContext ctx, Map<String, String> extraConf) {}

  default void shutdown() {}

  default void onTaskStart() {}

  default void onTaskSucceeded() {}

  default void onTaskFailed(TaskFailedReason failureReason) {}
}
