package io.sparkprof;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Hadoop S3A statistics of this executor, per stage attempt and for the whole JVM, as rows of
 * {@link #ROW_LONGS} longs the native agent puts into its next batch (schema/profile.fbs,
 * S3aStatistics). Everything Hadoop is reached by reflection: the plugin compiles against Spark
 * only, Spark 3.5 ships Hadoop 3.3.4 and Spark 4 a 3.4+/3.5, and a JVM without hadoop-aws simply
 * reports nothing.
 *
 * <p>Correct with concurrent tasks: a stage row holds only figures kept per thread, read on the
 * task thread at task start and end:
 *
 * <ul>
 *   <li>bytes and operations of the {@code s3a} FileSystem.Statistics' thread data (every Hadoop
 *       version; what Spark's own output/input metrics read for all file systems);
 *   <li>S3 request counts and durations of the thread's IOStatisticsContext (Hadoop &gt;= 3.3.5,
 *       HADOOP-17461): S3A streams merge their statistics into the context of the thread that
 *       opened them when they close, the part uploads of other threads included.
 * </ul>
 *
 * The executor row ({@code stage_id = -1}) holds the whole JVM's S3A work since the previous
 * batch: the s3a FileSystem.Statistics totals and the summed IOStatistics of the S3A file systems
 * in Hadoop's FileSystem cache (their counters are shared by every thread, so they are never
 * split between stages). On Hadoop 3.3.4 (Spark 3.5) that is the only source of request counts.
 * File systems created outside the cache ({@code fs.s3a.impl.disable.cache}) are not seen.
 */
final class S3aStatistics {
  // Row layout: stage id, stage attempt, tasks, has request counts (0/1), then the fields.
  static final int BYTES_WRITTEN = 0;
  static final int BYTES_READ = 1;
  static final int WRITE_OPERATIONS = 2;
  static final int READ_OPERATIONS = 3;
  /** IOStatistics counters (sums over the names of each entry), in row order after the above. */
  private static final String[][] COUNTERS = {
    {"object_put_request"},
    {"object_multipart_initiated"},
    {"multipart_upload_completed"},
    {"stream_write_block_uploads"},
    {"action_http_get_request"},
    {"action_http_head_request"},
    {"object_list_request"},
    {"object_delete_request", "object_bulk_delete_request"},
    {"object_copy_requests"},
    {"store_io_retry"},
    {"store_io_throttled"},
  };
  /** IOStatistics duration means whose sums (milliseconds) follow the counters. */
  private static final String[] DURATIONS_MS = {
    "object_put_request.mean",
    "object_multipart_initiated.mean",
    "action_http_get_request.mean",
    "action_http_head_request.mean",
    "object_list_request.mean",
  };
  static final int FIELDS = 4 + COUNTERS.length + DURATIONS_MS.length;
  static final int ROW_LONGS = 4 + FIELDS;
  /** Stage rows kept between batches; more distinct stage attempts share the overflow row. */
  private static final int MAX_STAGES = 1024;

  private final Hadoop hadoop;
  private final Map<Long, long[]> stages = new HashMap<>();  // guarded by this
  private final Map<Object, long[]> lastInstance = new IdentityHashMap<>();  // flush thread only
  private long[] lastTotals;  // flush thread only

  private S3aStatistics(Hadoop hadoop) {
    this.hadoop = hadoop;
  }

  /** Null when this JVM has no Hadoop FileSystem classes (nothing to measure). */
  static S3aStatistics createOrNull(ClassLoader loader) {
    Hadoop hadoop = Hadoop.find(loader);
    return hadoop == null ? null : new S3aStatistics(hadoop);
  }

  /** True when stage rows carry request counts (Hadoop's IOStatisticsContext exists). */
  boolean threadRequestCounts() {
    return hadoop.currentContext != null;
  }

  /**
   * A task's start: what its thread had done so far, and the thread's IOStatisticsContext, held
   * until the task ends. Hadoop maps a thread to its context through a weak reference only: held
   * by nobody, a GC replaces it mid-task with an empty one (measured on Spark 4.2 / Hadoop 3.5.0:
   * every task ended with a new context, so stage rows had no requests and no multipart uploads).
   * Held, it receives what the task's streams merge into it when they close.
   */
  static final class TaskStart {
    final long[] fields;
    final Object context;

    TaskStart(long[] fields, Object context) {
      this.fields = fields;
      this.context = context;
    }
  }

  /** The task start's baseline, on the task thread. Never throws. */
  TaskStart taskStarted() {
    long[] fields = new long[FIELDS];
    Object context = null;
    try {
      hadoop.readThreadStatistics(fields);
      if (hadoop.currentContext != null) {
        context = hadoop.currentContext.invoke(null);
        hadoop.readIoStatistics(context, fields);
      }
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return new TaskStart(new long[FIELDS], context);
    }
    return new TaskStart(fields, context);
  }

  /** Adds this thread's work since {@code start} to the stage attempt's row. Never throws. */
  void taskEnded(int stageId, int stageAttempt, TaskStart start) {
    long[] end = new long[FIELDS];
    try {
      hadoop.readThreadStatistics(end);
      if (start.context != null) hadoop.readIoStatistics(start.context, end);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      end = start.fields;  // nothing known: the task adds nothing
    }
    long key = ((long) stageId << 32) | (stageAttempt & 0xffffffffL);
    synchronized (this) {
      long[] row = stages.get(key);
      if (row == null) {
        if (stages.size() >= MAX_STAGES) {
          key = -1L;  // the overflow row: stage unknown, counted once per task
          stageId = -1;
          stageAttempt = -1;
          row = stages.get(key);
        }
        if (row == null) {
          row = new long[ROW_LONGS];
          row[0] = stageId;
          row[1] = stageAttempt;
          row[3] = threadRequestCounts() ? 1 : 0;
          stages.put(key, row);
        }
      }
      row[2] += 1;
      for (int i = 0; i < FIELDS; ++i) row[4 + i] += Math.max(0, end[i] - start.fields[i]);
    }
  }

  /**
   * The rows since the previous call: one per stage attempt with ended tasks, then the executor
   * row when the JVM did any S3A work. Empty when nothing happened. Runs on the flush thread.
   */
  long[] takeRows() {
    List<long[]> rows = new ArrayList<>();
    synchronized (this) {
      for (long[] row : stages.values()) {
        if (row[0] >= 0 || row[2] > 0) rows.add(row);
      }
      stages.clear();
    }
    long[] executor = executorRowOrNull();
    if (executor != null) rows.add(executor);
    long[] flat = new long[rows.size() * ROW_LONGS];
    for (int i = 0; i < rows.size(); ++i) {
      System.arraycopy(rows.get(i), 0, flat, i * ROW_LONGS, ROW_LONGS);
    }
    return flat;
  }

  /** The JVM's S3A work since the previous batch, or null when there was none. */
  private long[] executorRowOrNull() {
    long[] totals = new long[FIELDS];
    try {
      hadoop.readTotals(totals);
      for (Object fileSystem : hadoop.cachedS3aFileSystems()) {
        long[] now = new long[FIELDS];
        hadoop.readIoStatistics(hadoop.ioStatisticsOf(fileSystem), now);
        long[] before = lastInstance.put(fileSystem, now);
        for (int i = 4; i < FIELDS; ++i) {
          totals[i] += before == null ? now[i] : Math.max(0, now[i] - before[i]);
        }
      }
      lastInstance.keySet().retainAll(hadoop.cachedS3aFileSystems());
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return null;
    }
    long[] row = new long[ROW_LONGS];
    row[0] = -1;
    row[1] = -1;
    row[3] = 1;
    boolean any = false;
    for (int i = 0; i < FIELDS; ++i) {
      long value = totals[i];
      if (i < 4) {  // cumulative FileSystem.Statistics totals: the growth since the last batch
        long before = lastTotals == null ? 0 : lastTotals[i];
        value = Math.max(0, totals[i] - before);
      }
      row[4 + i] = value;
      any |= value != 0;
    }
    lastTotals = totals;
    return any ? row : null;
  }

  /** The Hadoop methods used, resolved once. */
  private static final class Hadoop {
    Method getAllStatistics;
    Method getScheme;
    Method getThreadStatistics;
    Method[] threadData = new Method[4];  // getBytesWritten, getBytesRead, getWriteOps, getReadOps
    Method[] totals = new Method[4];      // the same on Statistics: JVM-wide
    Method currentContext;                // IOStatisticsContext.getCurrentIOStatisticsContext
    Method contextStatistics;             // IOStatisticsContext.getIOStatistics
    Method retrieveIoStatistics;          // IOStatisticsSupport.retrieveIOStatistics
    Method counters;
    Method meanStatistics;
    Method meanSum;
    Field cache;
    Field cacheMap;
    volatile Object s3aStatistics;  // FileSystem.Statistics of scheme s3a, once it exists

    static Hadoop find(ClassLoader loader) {
      try {
        Hadoop h = new Hadoop();
        Class<?> fileSystem = Class.forName("org.apache.hadoop.fs.FileSystem", false, loader);
        Class<?> statistics = Class.forName("org.apache.hadoop.fs.FileSystem$Statistics", false,
            loader);
        Class<?> data = Class.forName(
            "org.apache.hadoop.fs.FileSystem$Statistics$StatisticsData", false, loader);
        h.getAllStatistics = fileSystem.getMethod("getAllStatistics");
        h.getScheme = statistics.getMethod("getScheme");
        h.getThreadStatistics = statistics.getMethod("getThreadStatistics");
        String[] names = {"getBytesWritten", "getBytesRead", "getWriteOps", "getReadOps"};
        for (int i = 0; i < names.length; ++i) {
          h.threadData[i] = data.getMethod(names[i]);
          h.totals[i] = statistics.getMethod(names[i]);
        }
        Class<?> support = Class.forName(
            "org.apache.hadoop.fs.statistics.IOStatisticsSupport", false, loader);
        Class<?> ioStatistics = Class.forName(
            "org.apache.hadoop.fs.statistics.IOStatistics", false, loader);
        h.retrieveIoStatistics = support.getMethod("retrieveIOStatistics", Object.class);
        h.counters = ioStatistics.getMethod("counters");
        h.meanStatistics = ioStatistics.getMethod("meanStatistics");
        h.meanSum = Class.forName("org.apache.hadoop.fs.statistics.MeanStatistic", false, loader)
            .getMethod("getSum");
        try {
          Class<?> context = Class.forName(
              "org.apache.hadoop.fs.statistics.IOStatisticsContext", false, loader);
          h.currentContext = context.getMethod("getCurrentIOStatisticsContext");
          h.contextStatistics = context.getMethod("getIOStatistics");
        } catch (ReflectiveOperationException e) {
          h.currentContext = null;  // Hadoop < 3.3.5: request counts per executor only
        }
        h.cache = fileSystem.getDeclaredField("CACHE");
        h.cache.setAccessible(true);
        h.cacheMap = h.cache.getType().getDeclaredField("map");
        h.cacheMap.setAccessible(true);
        return h;
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        return null;
      }
    }

    Object s3aStatisticsOrNull() throws ReflectiveOperationException {
      Object found = s3aStatistics;
      if (found != null) return found;
      for (Object statistics : (List<?>) getAllStatistics.invoke(null)) {
        if ("s3a".equals(getScheme.invoke(statistics))) {
          s3aStatistics = statistics;  // one per FileSystem class, kept by Hadoop for ever
          return statistics;
        }
      }
      return null;
    }

    void readThreadStatistics(long[] fields) throws ReflectiveOperationException {
      Object statistics = s3aStatisticsOrNull();
      if (statistics == null) return;
      Object data = getThreadStatistics.invoke(statistics);
      for (int i = 0; i < 4; ++i) fields[i] = ((Number) threadData[i].invoke(data)).longValue();
    }

    void readTotals(long[] fields) throws ReflectiveOperationException {
      Object statistics = s3aStatisticsOrNull();
      if (statistics == null) return;
      for (int i = 0; i < 4; ++i) fields[i] = ((Number) totals[i].invoke(statistics)).longValue();
    }

    Object ioStatisticsOf(Object source) throws ReflectiveOperationException {
      return retrieveIoStatistics.invoke(null, source);
    }

    /** Adds the counters and duration sums of an IOStatistics (or a context) to fields[4..]. */
    void readIoStatistics(Object source, long[] fields) throws ReflectiveOperationException {
      if (source == null) return;
      Object statistics = contextStatistics != null
              && contextStatistics.getDeclaringClass().isInstance(source)
          ? contextStatistics.invoke(source) : source;
      if (statistics == null) return;
      Map<?, ?> counterMap = (Map<?, ?>) counters.invoke(statistics);
      int field = 4;
      for (String[] names : COUNTERS) {
        for (String name : names) {
          Object value = counterMap.get(name);
          if (value instanceof Number) fields[field] += ((Number) value).longValue();
        }
        ++field;
      }
      Map<?, ?> means = (Map<?, ?>) meanStatistics.invoke(statistics);
      for (String name : DURATIONS_MS) {
        Object mean = means.get(name);
        if (mean != null) fields[field] += ((Number) meanSum.invoke(mean)).longValue();
        ++field;
      }
    }

    /** The S3A file systems in Hadoop's FileSystem cache right now. */
    List<Object> cachedS3aFileSystems() throws ReflectiveOperationException {
      Object cacheObject = cache.get(null);
      List<Object> found = new ArrayList<>();
      synchronized (cacheObject) {  // FileSystem.Cache guards its map with itself
        for (Object fileSystem : ((Map<?, ?>) cacheMap.get(cacheObject)).values()) {
          if (fileSystem.getClass().getName().endsWith(".S3AFileSystem")) found.add(fileSystem);
        }
      }
      return found;
    }
  }
}
