import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A fixed amount of CPU- and allocation-heavy work on several threads (hashing, sorting, string
 * building, short-lived objects), so CPU time with and without the agent can be compared.
 * With "serialization", each round also writes a list of records through JDK serialization
 * (reflection, stubs and allocation slow paths: where stack walks fail most).
 * With "tasks" as a fourth argument, each round runs as a Spark task would: tagged through
 * io.sparkprof.NativeAgent (found by reflection; put the agent tests' classes on the class path),
 * so mode cpu+wall wall-samples the workers and every round pays a tag and an untag.
 * Usage: java OverheadWorkload THREADS ROUNDS [plain|serialization] [tasks]
 */
public final class OverheadWorkload {
  static volatile long sink;

  record Row(long id, String name, double[] values) implements Serializable {}

  static long serialize(Random random) {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      rows.add(new Row(random.nextLong(), "row-" + i, new double[] {random.nextDouble(), i}));
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(rows);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.size();
  }

  static long round(Random random) {
    Map<String, Integer> counts = new HashMap<>();
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 20_000; i++) {
      String key = "key-" + random.nextInt(5_000);
      counts.merge(key, 1, Integer::sum);
      if (i % 100 == 0) text.append(key).append(',');
    }
    long[] values = new long[50_000];
    for (int i = 0; i < values.length; i++) values[i] = random.nextLong();
    Arrays.sort(values);
    List<double[]> garbage = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) garbage.add(new double[32]);
    return counts.size() + values[values.length / 2] + text.length() + garbage.size();
  }

  static void invoke(java.lang.reflect.Method method, Object... arguments) {
    try {
      method.invoke(null, arguments);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  public static void main(String[] args) throws InterruptedException {
    int threads = Integer.parseInt(args[0]);
    int rounds = Integer.parseInt(args[1]);
    boolean withSerialization = args.length > 2 && args[2].equals("serialization");
    boolean asTasks = args.length > 3 && args[3].equals("tasks");
    java.lang.reflect.Method tag = null;
    java.lang.reflect.Method untag = null;
    if (asTasks) {
      try {
        Class<?> agent = Class.forName("io.sparkprof.NativeAgent");
        tag = agent.getMethod("tagCurrentThread", int.class, int.class, long.class);
        untag = agent.getMethod("untagCurrentThread");
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("tasks: io.sparkprof.NativeAgent is not on the class path", e);
      }
    }
    final java.lang.reflect.Method tagMethod = tag;
    final java.lang.reflect.Method untagMethod = untag;
    Thread[] workers = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      final long seed = t;
      workers[t] = new Thread(() -> {
        Random random = new Random(seed);
        long local = 0;
        for (int r = 0; r < rounds; r++) {
          if (tagMethod != null) invoke(tagMethod, 1, 0, seed * rounds + r);
          local += round(random);
          if (withSerialization) local += serialize(random);
          if (untagMethod != null) invoke(untagMethod);
        }
        sink += local;
      }, "bench-worker-" + t);
      workers[t].start();
    }
    for (Thread worker : workers) worker.join();
    System.out.println("sink " + (sink & 1));
  }
}
