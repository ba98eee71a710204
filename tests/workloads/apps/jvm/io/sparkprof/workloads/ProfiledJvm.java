package io.sparkprof.workloads;

import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * The workloads whose planted problem is in the executors' JVM code, where only the profile
 * shows it (the event log calls all of it run time): Java serialization of a shuffle, regular
 * expressions compiled per record, a lock every task takes per record; each with its control --
 * and one in the driver's JVM: a per-row loop over collected results while the executors wait;
 * and the memory kills only the JVM's code can plant: direct buffers past their limit, native
 * memory past a YARN container's.
 *
 * <p>Usage: {@code spark-submit --class io.sparkprof.workloads.ProfiledJvm JAR WORKLOAD
 * SCRATCH_DIR}, as the Python workloads (apps/common.py): each job is labelled with
 * setJobDescription, which accuracy.py finds stages by. Work is sized in records, never in time.
 * Only Spark's Java API is used; generate.py compiles it against the release it runs on.
 */
public final class ProfiledJvm {
  private ProfiledJvm() {}

  private static final Map<String, BiConsumer<JavaSparkContext, String>> WORKLOADS =
      new TreeMap<>();

  static {
    WORKLOADS.put("java_serialization", (sc, scratch) -> shuffleOrders(sc,
        "java serialization: 600k order objects shuffled with Java serialization"));
    WORKLOADS.put("kryo_serialization", (sc, scratch) -> shuffleOrders(sc,
        "kryo serialization: 600k order objects shuffled with Kryo, classes registered"));
    WORKLOADS.put("regex_per_row", (sc, scratch) -> parseLines(sc, false));
    WORKLOADS.put("regex_hoisted", (sc, scratch) -> parseLines(sc, true));
    WORKLOADS.put("jvm_lock", (sc, scratch) -> lockedWork(sc, true));
    WORKLOADS.put("jvm_no_lock", (sc, scratch) -> lockedWork(sc, false));
    WORKLOADS.put("driver_busy", (sc, scratch) -> driverBusy(sc));
    WORKLOADS.put("direct_buffer_oom", (sc, scratch) -> directBuffers(sc));
    WORKLOADS.put("yarn_pmem_kill", (sc, scratch) -> holdOffHeap(sc, 1024, 15,
        "yarn pmem kill: a task holds 1 GiB of native memory outside the heap"));
    // Held longer: YARN's start-up before the first executor (~30 s on a busy 2-core host,
    // ApplicationMaster and executor containers) stays a small share of the control's run.
    WORKLOADS.put("yarn_pmem_fits", (sc, scratch) -> holdOffHeap(sc, 1024, 150,
        "yarn pmem fits: the same 1 GiB with the overhead sized for it"));
  }

  public static void main(String[] args) {
    if (args.length != 2 || !WORKLOADS.containsKey(args[0])) {
      System.err.println("usage: ProfiledJvm {" + String.join(",", WORKLOADS.keySet())
          + "} SCRATCH_DIR");
      System.exit(2);
    }
    SparkSession spark =
        SparkSession.builder().appName("sparkprof-workload-" + args[0]).getOrCreate();
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    sc.setLogLevel("WARN");
    try {
      WORKLOADS.get(args[0]).accept(sc, args[1]);
    } finally {
      spark.stop();
    }
  }

  /** 0, 1, ..., n - 1: the driver's list a job is parallelized from. */
  static List<Integer> upTo(int n) {
    List<Integer> values = new ArrayList<>(n);
    for (int i = 0; i < n; i++) values.add(i);
    return values;
  }

  /** An order as an application might keep it: a few fields, strings and arrays. */
  public static final class Order implements Serializable {
    private static final long serialVersionUID = 1L;
    final long id;
    final String customer;
    final String[] items;
    final double[] prices;
    final List<String> tags;

    Order(long id) {
      this.id = id;
      this.customer = "customer-" + (id % 5000);
      this.items = new String[8];
      this.prices = new double[8];
      for (int i = 0; i < items.length; i++) {
        items[i] = "item-" + ((id * 31 + i) % 100_000);
        prices[i] = ((id + i) % 1000) / 10.0;
      }
      this.tags = new ArrayList<>(Arrays.asList("web", "priority-" + (id % 3), "eu"));
    }
  }

  /**
   * 600,000 orders made on the executors, then shuffled into 8 partitions by customer and
   * summed: every order is written and read once by the shuffle's serializer (the session's
   * spark.serializer: Java serialization by default, Kryo in the control).
   */
  static void shuffleOrders(JavaSparkContext sc, String description) {
    sc.setJobDescription(description);
    double total = sc.parallelize(upTo(8), 8)
        .flatMap(slice -> {
          List<Order> orders = new ArrayList<>();
          for (long id = slice; id < 600_000; id += 8) orders.add(new Order(id));
          return orders.iterator();
        })
        .mapToPair(order -> new Tuple2<>(order.customer, order))
        .partitionBy(new HashPartitioner(8))
        .map(pair -> {
          double sum = 0;
          for (double price : pair._2().prices) sum += price;
          return sum;
        })
        .reduce(Double::sum);
    System.out.println("orders total " + total);
  }

  private static final String[] FIELD_PATTERNS = {
      "order-(\\d+)", "customer-(\\d+)", "sku=([A-Z]{3}\\d{4})", "qty=(\\d+)", "eur=(\\d+\\.\\d\\d)"};
  private static final Pattern[] COMPILED = new Pattern[FIELD_PATTERNS.length];
  private static final Pattern SEPARATORS = Pattern.compile("[;,]\\s*");

  static {
    for (int i = 0; i < FIELD_PATTERNS.length; i++) COMPILED[i] = Pattern.compile(FIELD_PATTERNS[i]);
  }

  /** The fields of one line: each pattern compiled for this line, or the ones compiled once. */
  static long parseLine(String line, boolean hoisted) {
    long found = 0;
    for (int i = 0; i < FIELD_PATTERNS.length; i++) {
      Matcher m = (hoisted ? COMPILED[i] : Pattern.compile(FIELD_PATTERNS[i])).matcher(line);
      if (m.find()) found += m.group(1).length();
    }
    String[] parts = hoisted ? SEPARATORS.split(line) : line.split("[;,]\\s*");
    return found + parts.length;
  }

  /** 2.4M log lines parsed field by field. */
  static void parseLines(JavaSparkContext sc, boolean hoisted) {
    sc.setJobDescription(hoisted
        ? "regex hoisted: 2.4M lines parsed with patterns compiled once"
        : "regex per row: 2.4M lines parsed with patterns compiled per line");
    JavaRDD<String> lines = sc.parallelize(upTo(8), 8).flatMap(slice -> new Iterator<String>() {
      long next = slice;

      @Override
      public boolean hasNext() {
        return next < 2_400_000;
      }

      @Override
      public String next() {
        long n = next;
        next += 8;
        return "order-" + n + "; customer-" + (n % 7919) + ", sku=ABC" + (1000 + n % 9000)
            + "; qty=" + (n % 17) + ", eur=" + (n % 500) + ".25";
      }
    });
    long fields = lines.map(line -> parseLine(line, hoisted)).reduce(Long::sum);
    System.out.println("fields " + fields);
  }

  /**
   * A scorer every task of an executor JVM shares (a static field, made once per JVM), kept
   * correct the easy way: its method is synchronized.
   */
  static final class SharedScorer {
    private long state;

    synchronized long score(long record) {
      state += work(record);
      return state;
    }
  }

  private static final SharedScorer SCORER = new SharedScorer();

  /** About 0.4 ms of arithmetic, with a result the JIT cannot drop. */
  static long work(long seed) {
    long x = seed;
    for (int i = 0; i < 200_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
    return x;
  }

  /**
   * 24,000 records, each with ~0.4 ms of work, on one executor's task slots: every record scored
   * by the JVM's one {@link SharedScorer}, whose synchronized method the tasks take turns in, or
   * the same work without it (the control).
   */
  static void lockedWork(JavaSparkContext sc, boolean locked) {
    sc.setJobDescription(locked
        ? "jvm lock: per-record work under a lock every task shares"
        : "jvm no lock: the same per-record work without the lock");
    long sum = sc.parallelize(upTo(24_000), 8).map(record -> {
      if (!locked) return work(record);
      return SCORER.score(record);
    }).reduce((a, b) -> a ^ b);
    System.out.println("work " + sum);
  }

  /**
   * A short job whose 100,000 results the driver collects and then scores one by one in its own
   * loop ({@link #scoreOnDriver}, ~0.4 ms of arithmetic a row) while both executors stay
   * allocated and idle; then a second short job with the scores.
   */
  static void driverBusy(JavaSparkContext sc) {
    sc.setJobDescription("driver busy: collect 100k rows to the driver");
    List<Long> rows = sc.parallelize(upTo(100_000), 4).map(i -> (long) i * 7919).collect();
    long[] scores = scoreOnDriver(rows);
    sc.setJobDescription("driver busy: a job with the scores");
    long count = sc.parallelize(upTo(scores.length), 4).filter(i -> scores[i] % 2 == 0).count();
    System.out.println("even scores " + count);
  }

  /** The driver's own per-row work: the arithmetic of {@link #work}, written out here. */
  static long[] scoreOnDriver(List<Long> rows) {
    long[] scores = new long[rows.size()];
    for (int r = 0; r < scores.length; r++) {
      long x = rows.get(r);
      for (int i = 0; i < 200_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
      scores[r] = x;
    }
    return scores;
  }

  /**
   * Each task keeps a 32 MiB direct buffer (its pages written) per record, 16 records a task,
   * so a task wants 512 MiB of direct memory: past the executor's -XX:MaxDirectMemorySize (the
   * manifest's 256m; Spark refuses to start an executor with less than its 200 MiB
   * spark.network.maxRemoteBlockSizeFetchToMem) allocateDirect throws OutOfMemoryError: Cannot
   * reserve ... bytes of direct buffer memory, and Spark ends the executor (exit code 52); every
   * attempt does the same.
   */
  static void directBuffers(JavaSparkContext sc) {
    sc.setJobDescription("direct buffer oom: 32 MiB direct buffers per record, kept");
    sc.parallelize(upTo(64), 4)
        .mapPartitions(
            values -> {
              List<ByteBuffer> kept = new ArrayList<>();
              long sum = 0;
              while (values.hasNext()) {
                int value = values.next();
                ByteBuffer buffer = ByteBuffer.allocateDirect(32 << 20);
                for (int i = 0; i < buffer.capacity(); i += 4096) buffer.put(i, (byte) value);
                kept.add(buffer);
                sum += buffer.get(0);
              }
              return Collections.singletonList(sum + kept.size()).iterator();
            })
        .collect();
  }

  /**
   * One task that takes {@code mib} MiB of native memory outside the heap in 64 MiB blocks
   * (sun.misc.Unsafe, as Spark's own off-heap pool and many native libraries allocate; every page
   * written, so it is resident), holds it {@code holdSeconds} and frees it: on YARN the
   * container's process tree outgrows an executor whose spark.executor.memoryOverhead does not
   * cover it, and the NodeManager's physical-memory check kills the container.
   */
  static void holdOffHeap(JavaSparkContext sc, int mib, int holdSeconds, String description) {
    sc.setJobDescription(description);
    long held = sc.parallelize(upTo(1), 1).map(task -> {
      Object unsafe = theUnsafe();
      java.lang.reflect.Method allocate = unsafe.getClass().getMethod("allocateMemory", long.class);
      java.lang.reflect.Method set =
          unsafe.getClass().getMethod("setMemory", long.class, long.class, byte.class);
      java.lang.reflect.Method free = unsafe.getClass().getMethod("freeMemory", long.class);
      final long block = 64L << 20;
      List<Long> blocks = new ArrayList<>();
      try {
        for (long taken = 0; taken < ((long) mib << 20); taken += block) {
          long address = (Long) allocate.invoke(unsafe, block);
          blocks.add(address);
          set.invoke(unsafe, address, block, (byte) 1);
          Thread.sleep(100);
        }
        Thread.sleep(holdSeconds * 1000L);
        return (long) blocks.size() * block;
      } finally {
        for (long address : blocks) free.invoke(unsafe, address);
      }
    }).reduce(Long::sum);
    System.out.println("held " + (held >> 20) + " MiB off the heap");
  }

  static Object theUnsafe() throws ReflectiveOperationException {
    java.lang.reflect.Field field = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
    field.setAccessible(true);
    return field.get(null);
  }
}
