package io.sparkprof;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way sparkprof's JVM side logs: through Spark's logger (slf4j, which Spark 3.5 and 4
 * ship; the jar bundles none), as logger {@code io.sparkprof}, whose short name Spark's default
 * layout ({@code %c{1}}) prints: {@code 26/11/29 06:30:00 WARN sparkprof: driver unsampled: ...}.
 *
 * <p>{@link #warn} is for what the user should see: a part of the profiling that is off, a value
 * that was not used, data that was dropped. Spark's shells set the root level to WARN, so these
 * appear there too. {@link #info} is for status (where the metrics and reports are, counts at
 * the end).
 */
final class Log {
  private static final Logger LOGGER = LoggerFactory.getLogger("io.sparkprof");

  private Log() {}

  static void warn(String message) {
    LOGGER.warn(message);
  }

  static void info(String message) {
    LOGGER.info(message);
  }

  /**
   * {@link NativeLibraries} and {@link NativeAgent} also run without Spark's classes (the agent's
   * JVM tests), so they log to stderr until a plugin side routes them here.
   */
  static void routeNativeLibraries() {
    NativeLibraries.logTo(Log::warn);
  }
}
