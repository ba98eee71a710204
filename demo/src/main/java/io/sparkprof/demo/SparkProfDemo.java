package io.sparkprof.demo;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.function.IntFunction;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * A Spark application whose slow parts have known causes, one job each, so that a profile of it
 * can be checked against the cause: Java serialization, a skewed key, a plain shuffle, a Parquet
 * write, a sort that spills, and garbage-collector churn. Every job carries a description
 * ({@code JavaSparkContext.setJobDescription}) that starts with its kind and a colon; the tests
 * find the jobs (and their stages) by it. Work is sized in records, never in time.
 *
 * <p>Usage: {@code spark-submit --class io.sparkprof.demo.SparkProfDemo sparkprof-demo.jar
 * OUTPUT_DIR [SCALE]}: the Parquet files go to OUTPUT_DIR/parquet; SCALE (default 1) multiplies
 * every record count. Sized for 2 executors of 1 core and 512 MiB each: about 30 s of tasks.
 * Only Spark's Java API is used, and the class files are Java 8, so the same jar runs on Spark
 * 3.x (Scala 2.12) and 4.x (Scala 2.13).
 */
public final class SparkProfDemo {
  /** Job kinds, in the order they run; each is the start of its job's description. */
  public static final List<String> JOB_KINDS =
      Arrays.asList("serialization", "skew", "shuffle", "parquet-write", "spill", "gc-churn");

  private SparkProfDemo() {}

  public static void main(String[] args) {
    if (args.length < 1 || args.length > 2) {
      System.err.println("usage: SparkProfDemo OUTPUT_DIR [SCALE]");
      System.exit(2);
    }
    File output = new File(args[0]);
    double scale = args.length > 1 ? Double.parseDouble(args[1]) : 1.0;
    SparkSession spark = SparkSession.builder().appName("sparkprof-demo").getOrCreate();
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    try {
      run(sc, "serialization: order graphs deep-copied with ObjectOutputStream, then shuffled "
          + "with the JavaSerializer", () -> serialization(sc, records(20_000, scale)));
      run(sc, "skew: groupByKey where one key holds 90% of the rows",
          () -> skew(sc, records(1_600_000, scale)));
      run(sc, "shuffle: 8-way repartition of a generated table",
          () -> shuffle(spark, records(2_000_000, scale)));
      run(sc, "parquet-write: a generated table written as Parquet files",
          () -> parquetWrite(spark, records(1_500_000, scale), new File(output, "parquet")));
      run(sc, "spill: a sort of more rows than the executors' execution memory holds",
          () -> spill(sc, records(1_800_000, scale)));
      run(sc, "gc-churn: short-lived objects allocated for every record",
          () -> gcChurn(sc, records(24_000_000, scale)));
    } finally {
      spark.stop();
    }
  }

  private static void run(JavaSparkContext sc, String description, Runnable job) {
    sc.setJobDescription(description);
    long start = System.nanoTime();
    job.run();
    System.out.printf("sparkprof-demo: %s: %.1f s%n", description.substring(0,
        description.indexOf(':')), (System.nanoTime() - start) / 1e9);
    sc.clearJobGroup();
  }

  private static int records(int count, double scale) {
    return Math.max(1, (int) Math.round(count * scale));
  }

  private static List<Integer> seeds(int partitions) {
    List<Integer> seeds = new ArrayList<>();
    for (int i = 0; i < partitions; i++) {
      seeds.add(i);
    }
    return seeds;
  }

  /**
   * (a) Executor time goes to java.io.ObjectOutputStream/ObjectInputStream: every order is
   * deep-copied through serialization in the map tasks, and the shuffle writes and reads the
   * orders with Spark's default JavaSerializer (the Java API's RDDs carry no ClassTag, so Spark
   * never switches them to Kryo).
   */
  static void serialization(JavaSparkContext sc, int orders) {
    int partitions = 4;
    int perPartition = orders / partitions;
    JavaPairRDD<Long, OrderGraph.Order> copies = sc.parallelize(seeds(partitions), partitions)
        .flatMapToPair(seed -> generated(perPartition, i -> {
          Random random = new Random(seed * 1_000_003L + i);
          OrderGraph.Order order =
              OrderGraph.deepCopy(OrderGraph.order(random, (long) seed * perPartition + i));
          return new Tuple2<>(order.customer.id, order);
        }));
    long count = copies.partitionBy(new HashPartitioner(partitions)).count();
    check(count == (long) perPartition * partitions, "serialization", count);
  }

  /**
   * (b) One reduce task does ~90% of the work: key 0 holds 90% of the rows, and groupByKey
   * sends all of them to one partition, where every value is scored (a few seconds of CPU: long
   * enough for the data-skew rule, which ignores stages whose longest task is under 5 s).
   */
  static void skew(JavaSparkContext sc, int rows) {
    int partitions = 8;
    int perPartition = rows / partitions;
    JavaPairRDD<Integer, Long> events = sc.parallelize(seeds(partitions), partitions)
        .flatMapToPair(seed -> generated(perPartition, i -> {
          long id = (long) seed * perPartition + i;
          int key = i % 10 == 0 ? 1 + (int) (id % 997) : 0;
          return new Tuple2<>(key, id);
        }));
    long keys = events.groupByKey(partitions).mapValues(SparkProfDemo::score).count();
    check(keys == 998, "skew", keys);
  }

  /**
   * A few microseconds of arithmetic per value (xorshift rounds): 3000 of them keep the skewed
   * task well past 5 s on fast machines too (2000 gave 5.8 s on a 2026 2-vCPU VM, at the edge of
   * the data-skew rule and of the end-to-end test's 6 s quiet gap).
   */
  static long score(Iterable<Long> values) {
    long sum = 0;
    for (long value : values) {
      long x = value | 1;
      for (int round = 0; round < 3000; round++) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
      }
      sum += x;
    }
    return sum;
  }

  /** (c) A Dataset shuffle (Tungsten rows) of every row of a generated table: repartition(8). */
  static void shuffle(SparkSession spark, int rows) {
    long characters = spark.range(0, rows, 1, 4)
        .selectExpr("id", "concat('payload-', id, '-', id * 7919) AS s")
        .repartition(8)
        .selectExpr("sum(length(s)) AS characters")
        .first().getLong(0);
    check(characters > rows, "shuffle", characters);
  }

  /** (d) File output and the job commit of a Parquet write (FileOutputCommitter, _SUCCESS). */
  static void parquetWrite(SparkSession spark, int rows, File path) {
    spark.range(0, rows, 1, 4)
        .selectExpr("id", "id % 97 AS bucket", "sha2(cast(id AS STRING), 256) AS digest",
            "cast(id * 31 % 100003 AS DOUBLE) / 7 AS amount")
        // A file: URI, so the files land on the local disk whatever the default file system is
        // (HDFS when the application runs on YARN).
        .write().mode(SaveMode.Overwrite).parquet(path.toURI().toString());
    check(new File(path, "_SUCCESS").exists(), "parquet-write", path);
  }

  /**
   * (e) The reduce side sorts its partition (repartitionAndSortWithinPartitions) in
   * ExternalSorter; each of the two reduce tasks holds ~0.9 million rows (~145 MB of objects),
   * more than the execution memory of a 512 MiB executor (~115 MB), so it spills sorted runs to
   * disk and merges them.
   */
  static void spill(JavaSparkContext sc, int rows) {
    int partitions = 4;
    int perPartition = rows / partitions;
    JavaPairRDD<String, byte[]> data = sc.parallelize(seeds(partitions), partitions)
        .flatMapToPair(seed -> {
          Random random = new Random(seed);
          return generated(perPartition, i -> {
            char[] key = new char[16];
            for (int c = 0; c < key.length; c++) {
              key[c] = (char) ('a' + random.nextInt(26));
            }
            byte[] value = new byte[64];
            random.nextBytes(value);
            return new Tuple2<>(new String(key), value);
          });
        });
    long count = data.repartitionAndSortWithinPartitions(new HashPartitioner(2)).count();
    check(count == (long) perPartition * partitions, "spill", count);
  }

  /**
   * (f) Garbage-collector churn: every record allocates a string, its split parts and a list,
   * kept briefly in a small window so they escape and die young.
   */
  static void gcChurn(JavaSparkContext sc, int records) {
    int partitions = 4;
    int perPartition = records / partitions;
    JavaRDD<Integer> seeds = sc.parallelize(seeds(partitions), partitions);
    long checksum = seeds.map(seed -> {
      Object[] window = new Object[4096];
      long sum = 0;
      for (int i = 0; i < perPartition; i++) {
        String line = "event-" + seed + "-" + i + "-" + (i * 31 % 977);
        List<String> parts = new ArrayList<>(Arrays.asList(line.split("-")));
        window[i & (window.length - 1)] = parts;
        sum += parts.get(3).length();
      }
      return sum;
    }).reduce(Long::sum);
    check(checksum > 0, "gc-churn", checksum);
  }

  private static void check(boolean condition, String job, Object value) {
    if (!condition) {
      throw new IllegalStateException("sparkprof-demo: job " + job + " computed " + value);
    }
  }

  /** An iterator of count elements made on demand (a partition never holds them all). */
  static <T> Iterator<T> generated(int count, IntFunction<T> element) {
    return new Iterator<T>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < count;
      }

      @Override
      public T next() {
        if (next >= count) {
          throw new NoSuchElementException();
        }
        return element.apply(next++);
      }
    };
  }
}
