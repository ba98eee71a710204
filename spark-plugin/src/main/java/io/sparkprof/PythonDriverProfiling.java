package io.sparkprof;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The Python driver program's samples, handed over by sparkprof's driver sampler
 * ({@code sparkprof_driver.py}, started by {@code sparkprof-python} or {@code python -m
 * sparkprof_driver}) through Spark's own Py4J gateway, one file per flush window. Each goes to the
 * driver's aggregator as a batch of executor "driver" outside any task, so the report's
 * driver-bound finding can name the Python function the driver program was in while no task ran
 * (docs/agent.md, "The driver's own samples").
 *
 * <p>Called on a Py4J thread of the driver. Never throws: the Python side must not fail the
 * application for its profiler.
 */
public final class PythonDriverProfiling {
  private static final AtomicLong FILES_ACCEPTED = new AtomicLong();
  private static final AtomicLong FILES_REFUSED = new AtomicLong();
  private static volatile boolean refusalLogged;

  private PythonDriverProfiling() {}

  /**
   * One window's samples (the workers' file format, its task line unused) covering
   * {@code [startEpochNs, endEpochNs)}. Returns 0 when queued; a positive outcome code of
   * {@link NativeAggregator#ingest} when refused (logged once); -1 when no aggregator runs in this
   * JVM (the plugin is off, or the application ended), which tells the sampler to stop.
   */
  public static int add(byte[] file, long startEpochNs, long endEpochNs) {
    try {
      if (!NativeAggregator.isAvailable()) return NativeAggregator.NOT_RUNNING;
      int outcome = NativeAggregator.ingestPythonDriver(file, startEpochNs, endEpochNs);
      if (outcome == NativeAggregator.ACCEPTED) {
        FILES_ACCEPTED.incrementAndGet();
      } else if (outcome != NativeAggregator.NOT_RUNNING) {
        FILES_REFUSED.incrementAndGet();
        if (!refusalLogged) {
          refusalLogged = true;
          Log.warn("a file of the Python driver's samples was refused ("
              + NativeAggregator.outcomeName(outcome) + "); further refusals are counted, not "
              + "logged");
        }
      }
      return outcome;
    } catch (RuntimeException | LinkageError e) {
      return NativeAggregator.NOT_RUNNING;
    }
  }

  /** Files taken so far and refused, for the driver's status line; "" when none came. */
  static String counts() {
    long accepted = FILES_ACCEPTED.get();
    long refused = FILES_REFUSED.get();
    return accepted + refused == 0 ? ""
        : "; the Python driver's sample files: " + accepted + " accepted, " + refused + " refused";
  }
}
