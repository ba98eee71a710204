import io.sparkprof.NativeAgent;
import io.sparkprof.NativeLibraries;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.reflect.Method;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.function.IntSupplier;

/** Small workloads for the agent's JVM tests: `java AgentWorkloads <case> [seconds]`. */
public final class AgentWorkloads {
  static volatile long sink;

  static final class Row implements Serializable {
    final long id;
    final String name;
    final double[] values;
    final Map<String, Integer> attributes = new HashMap<>();

    Row(long id) {
      this.id = id;
      this.name = "row-" + id;
      this.values = new double[16];
      for (int i = 0; i < values.length; i++) values[i] = id * 0.5 + i;
      for (int i = 0; i < 4; i++) attributes.put("k" + i, i);
    }
  }

  static void serializeFor(long millis) throws Exception {
    long end = System.currentTimeMillis() + millis;
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 200; i++) rows.add(new Row(i));
    while (System.currentTimeMillis() < end) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        for (Row row : rows) out.writeObject(row);
      }
      sink += bytes.size();
    }
  }

  static void computeFor(long millis) {
    long end = System.currentTimeMillis() + millis;
    long x = 1;
    while (System.currentTimeMillis() < end) {
      for (int i = 0; i < 10_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
    }
    sink += x;
  }

  static void allocateFor(long millis) {
    long end = System.currentTimeMillis() + millis;
    List<byte[]> keep = new ArrayList<>();
    while (System.currentTimeMillis() < end) {
      for (int i = 0; i < 1000; i++) {
        byte[] block = new byte[1024 + (i % 64) * 64];
        if (i % 50 == 0) keep.add(block);
      }
      if (keep.size() > 20_000) keep.clear();
    }
    sink += keep.size();
  }

  static Thread[] startThreads(int count, Runnable body) {
    Thread[] threads = new Thread[count];
    for (int i = 0; i < count; i++) {
      threads[i] = new Thread(body, "worker-" + i);
      threads[i].start();
    }
    return threads;
  }

  static void joinAll(Thread[] threads) throws InterruptedException {
    for (Thread t : threads) t.join();
  }

  static final class ChurnLoader extends ClassLoader {
    private final byte[] bytes;

    ChurnLoader(byte[] bytes) {
      super(AgentWorkloads.class.getClassLoader());
      this.bytes = bytes;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (name.equals("ChurnTarget")) {
        synchronized (getClassLoadingLock(name)) {
          Class<?> c = findLoadedClass(name);
          if (c == null) c = defineClass(name, bytes, 0, bytes.length);
          return c;
        }
      }
      return super.loadClass(name, resolve);
    }
  }

  static void classChurn(long millis) throws Exception {
    byte[] bytes;
    try (InputStream in = AgentWorkloads.class.getResourceAsStream("/ChurnTarget.class")) {
      bytes = in.readAllBytes();
    }
    long end = System.currentTimeMillis() + millis;
    int loaders = 0;
    while (System.currentTimeMillis() < end) {
      for (int i = 0; i < 50; i++) {
        ChurnLoader loader = new ChurnLoader(bytes);
        IntSupplier target =
            (IntSupplier) loader.loadClass("ChurnTarget").getDeclaredConstructor().newInstance();
        sink += target.getAsInt();
        loaders++;
      }
      System.gc();  // unloads the previous loaders' classes
    }
    System.out.println("loaders=" + loaders);
  }

  static String httpGet(String url) throws Exception {
    HttpURLConnection connection = (HttpURLConnection) new URL(url).openConnection();
    connection.setConnectTimeout(2000);
    connection.setReadTimeout(2000);
    try (InputStream in = connection.getInputStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** Loaded, run and JIT-compiled before the plugin-start case starts the agent. */
  static final class PreloadedWork {
    static long spin(long millis) {
      long end = System.nanoTime() + millis * 1_000_000L;
      long x = 7;
      while (System.nanoTime() < end) {
        for (int i = 0; i < 10_000; i++) x = x * 2862933555777941757L + 3037000493L;
      }
      return x;
    }
  }

  /**
   * The plugin-only install: `pluginstart SECONDS OPTIONS java|native`. Worker threads exist
   * before the agent starts; four threads then start it at once, through NativeAgent.startFromJar
   * ("java") or straight through the native entry ("native", by reflection: the library is loaded
   * from the jar first); then the workers run tagged as tasks 300..303 of stage 11.
   */
  static void pluginStart(long millis, String options, String starter) throws Exception {
    System.out.println("loaded.before=" + NativeAgent.isLoaded());
    sink += PreloadedWork.spin(500);  // class loaded and compiled before the agent exists
    int workers = 4;
    CountDownLatch go = new CountDownLatch(1);
    Thread[] threads = new Thread[workers];
    for (int i = 0; i < workers; i++) {
      final int task = 300 + i;
      threads[i] = new Thread(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          return;
        }
        NativeAgent.tagCurrentThread(11, 0, task);
        sink += PreloadedWork.spin(millis);
        NativeAgent.untagCurrentThread();
      }, "pool-worker-" + i);
      threads[i].start();
    }

    Method startNative = NativeAgent.class.getDeclaredMethod("startInProcess0", String.class);
    startNative.setAccessible(true);
    if (starter.equals("native") && !NativeAgent.isLoaded()) {
      Method load = NativeLibraries.class.getDeclaredMethod("loadAgentLibraryFromJar");
      load.setAccessible(true);
      System.out.println("library=" + load.invoke(null));
    }
    String[] outcomes = {"started", "already running", "another copy", "failed"};
    List<String> results = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch ready = new CountDownLatch(1);
    Thread[] starters = new Thread[4];
    for (int i = 0; i < starters.length; i++) {
      starters[i] = new Thread(() -> {
        try {
          ready.await();
          results.add(starter.equals("java")
              ? NativeAgent.startFromJar(options)
              : outcomes[(Integer) startNative.invoke(null, options)]);
        } catch (Exception e) {
          results.add(e.toString());
        }
      });
      starters[i].start();
    }
    ready.countDown();
    joinAll(starters);
    Collections.sort(results);
    System.out.println("start.concurrent=" + String.join(",", results));
    System.out.println("start.again=" + NativeAgent.startFromJar(options) + ","
        + outcomes[(Integer) startNative.invoke(null, options)]);
    System.out.println("driver=" + NativeLibraries.loadDriverLibraryFromJar());

    go.countDown();
    int batches = 0;
    for (int i = 0; i < 4; i++) {
      Thread.sleep(millis / 4);
      System.gc();
      if (NativeAgent.drainBatchOrNull() != null) batches++;
    }
    joinAll(threads);
    if (NativeAgent.drainBatchOrNull() != null) batches++;
    System.out.println("batches=" + batches);
    System.out.println("status=" + NativeAgent.statusJson());
    List<String> mapped = new ArrayList<>();
    for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
      int path = line.indexOf('/');
      if (path >= 0 && line.contains("sparkprof") && !mapped.contains(line.substring(path))) {
        mapped.add(line.substring(path));
      }
    }
    System.out.println("maps=" + String.join("|", mapped));
  }

  /**
   * Task threads that wait in one way each (mode cpu+wall): tasks 200..204 of stage 9 sleep,
   * block entering a monitor another thread holds, read a socket nobody writes to, park on a
   * ReentrantLock another thread holds, and spin. Each prints its tagged wall time as
   * `tagged.TASK=NANOS`. The holders are untagged (wall sampling must leave them alone).
   */
  static void waits(long millis) throws Exception {
    Object monitor = new Object();
    java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
    java.net.ServerSocket server =
        new java.net.ServerSocket(0, 4, java.net.InetAddress.getLoopbackAddress());
    CountDownLatch held = new CountDownLatch(2);
    CountDownLatch release = new CountDownLatch(1);
    Thread monitorHolder = new Thread(() -> {
      synchronized (monitor) {
        held.countDown();
        awaitQuietly(release);
      }
    }, "holder-monitor");
    Thread lockHolder = new Thread(() -> {
      lock.lock();
      try {
        held.countDown();
        awaitQuietly(release);
      } finally {
        lock.unlock();
      }
    }, "holder-lock");
    monitorHolder.start();
    lockHolder.start();
    held.await();
    String[] kinds = {"sleep", "monitor", "socket", "park", "spin"};
    Thread[] threads = new Thread[kinds.length];
    long[] tagged = new long[kinds.length];
    for (int i = 0; i < kinds.length; i++) {
      final int index = i;
      final String kind = kinds[i];
      threads[i] = new Thread(() -> {
        try {
          java.net.Socket client = kind.equals("socket")
              ? new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), server.getLocalPort())
              : null;
          long start = System.nanoTime();
          NativeAgent.setTaskTag(9, 0, 200 + index);
          switch (kind) {
            case "sleep":
              Thread.sleep(millis);
              break;
            case "monitor":
              synchronized (monitor) {
                sink++;
              }
              break;
            case "socket":
              sink += client.getInputStream().read();  // the server closes it after `millis`
              break;
            case "park":
              lock.lock();
              lock.unlock();
              break;
            default:
              computeFor(millis);
          }
          NativeAgent.clearTaskTag();
          tagged[index] = System.nanoTime() - start;
          if (client != null) client.close();
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      }, "wait-" + kind);
      threads[i].start();
    }
    java.net.Socket accepted = server.accept();
    Thread.sleep(millis);
    release.countDown();  // the monitor and the lock are free from here
    accepted.close();     // the reader sees the end of the stream
    joinAll(threads);
    monitorHolder.join();
    lockHolder.join();
    server.close();
    for (int i = 0; i < kinds.length; i++) {
      System.out.println("tagged." + (200 + i) + "=" + tagged[i]);
    }
  }

  /** A scorer every task shares: its synchronized method is the contended monitor. */
  static final class SharedScorer {
    long total;
    long calls;

    synchronized void score(long nanos) {
      calls++;
      long end = System.nanoTime() + nanos;
      while (System.nanoTime() < end) total += total * 31 + 7;
    }
  }

  static void scoreRecords(SharedScorer scorer, long millis) {
    long end = System.nanoTime() + millis * 1_000_000L;
    while (System.nanoTime() < end) scorer.score(500_000);
  }

  /**
   * `monitors SECONDS DIR`: three task threads (tasks 220..222 of stage 11) and one untagged
   * thread call one SharedScorer's synchronized method in a loop for SECONDS (each call holds it
   * for 0.5 ms). Prints the tagged threads' blocked time as the JVM counts it
   * (`blocked.tagged_ms`, ThreadMXBean contention monitoring), the untagged one's, and writes each
   * drained batch to DIR/batch-N.bin (`batch_files=N`).
   */
  static void monitors(long millis, String dir) throws Exception {
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    mx.setThreadContentionMonitoringEnabled(true);
    SharedScorer scorer = new SharedScorer();
    int tagged = 3;
    Thread[] threads = new Thread[tagged + 1];
    long[] blockedMs = new long[threads.length];
    for (int i = 0; i < threads.length; i++) {
      final int index = i;
      final boolean tag = i < tagged;
      threads[i] = new Thread(() -> {
        if (tag) NativeAgent.setTaskTag(11, 0, 220 + index);
        scoreRecords(scorer, millis);
        if (tag) NativeAgent.clearTaskTag();
        // Read by the thread itself before it ends (a dead thread has no ThreadInfo).
        blockedMs[index] = mx.getThreadInfo(Thread.currentThread().getId()).getBlockedTime();
      }, tag ? "Executor task launch worker for task " + i + ".0 in stage 11.0 (TID " + (220 + i) + ")"
             : "untagged-scorer");
      threads[i].start();
    }
    int files = 0;
    boolean last = false;
    while (!last) {
      Thread.sleep(500);
      last = true;
      for (Thread thread : threads) last &= !thread.isAlive();
      byte[] batch = NativeAgent.drainBatch();
      if (batch != null) {
        java.nio.file.Files.write(java.nio.file.Paths.get(dir, "batch-" + files + ".bin"), batch);
        files++;
      }
    }
    long taggedMs = 0;
    for (int i = 0; i < tagged; i++) taggedMs += blockedMs[i];
    System.out.println("blocked.tagged_ms=" + taggedMs);
    System.out.println("blocked.untagged_ms=" + blockedMs[tagged]);
    System.out.println("calls=" + scorer.calls);
    System.out.println("batch_files=" + files);
    System.out.println("status=" + NativeAgent.status());
  }

  static Object retained;

  /**
   * `jvmmemory SECONDS DIR`: holds 48 MiB of direct buffers, a 16 MiB mapped file and ~200 MiB
   * of arrays through a full collection, then drains one batch to DIR/batch-0.bin and prints what
   * the JVM's management beans say (`mx.NAME=BYTES`) for the test to compare with the batch.
   */
  static void jvmMemory(long millis, String dir) throws Exception {
    java.util.List<java.nio.ByteBuffer> direct = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) direct.add(java.nio.ByteBuffer.allocateDirect(16 << 20));
    java.nio.file.Path file = java.nio.file.Paths.get(dir, "mapped.bin");
    java.nio.MappedByteBuffer mapped;
    try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file,
        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.READ,
        java.nio.file.StandardOpenOption.WRITE)) {
      mapped = channel.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, 0, 16 << 20);
    }
    long[][] arrays = new long[200][];
    for (int i = 0; i < arrays.length; i++) arrays[i] = new long[128 * 1024];  // 1 MiB each
    retained = arrays;
    System.gc();
    Thread.sleep(millis);
    byte[] batch = NativeAgent.drainBatch();
    java.nio.file.Files.write(java.nio.file.Paths.get(dir, "batch-0.bin"), batch);
    for (java.lang.management.BufferPoolMXBean pool :
        java.lang.management.ManagementFactory.getPlatformMXBeans(
            java.lang.management.BufferPoolMXBean.class)) {
      System.out.println("mx.buffer." + pool.getName() + "=" + pool.getMemoryUsed());
    }
    for (java.lang.management.MemoryPoolMXBean pool :
        java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
      String name = pool.getName().replace(' ', '_');
      System.out.println("mx.pool." + name + ".used=" + pool.getUsage().getUsed());
      if (pool.getCollectionUsage() != null) {
        System.out.println("mx.pool." + name + ".after_gc=" + pool.getCollectionUsage().getUsed());
      }
    }
    Runtime runtime = Runtime.getRuntime();
    System.out.println("mx.heap.max=" + runtime.maxMemory());
    System.out.println("mx.heap.committed=" + runtime.totalMemory());
    System.out.println("mx.heap.used=" + (runtime.totalMemory() - runtime.freeMemory()));
    System.out.println("mx.threads=" + Thread.activeCount());
    System.out.println("kept=" + direct.size() + mapped.capacity() + arrays.length);
    // `jvmmemory SECONDS DIR DRAINS`: that many more batches (each reads the memory figures),
    // for the agent's own count of what the readings cost (status()).
    int drains = Integer.parseInt(System.getProperty("drains", "0"));
    for (int i = 0; i < drains; i++) {
      NativeAgent.setTaskTag(1, 0, i);  // something to send
      computeFor(1);
      NativeAgent.clearTaskTag();
      NativeAgent.drainBatch();
    }
    System.out.println("status=" + NativeAgent.status());
  }

  /** `spinners` tagged threads (tasks 210..) spin for `millis`: more than the CPUs can run. */
  static void starved(long millis, int spinners) throws Exception {
    Thread[] threads = new Thread[spinners];
    for (int i = 0; i < spinners; i++) {
      final int task = 210 + i;
      threads[i] = new Thread(() -> {
        NativeAgent.setTaskTag(10, 0, task);
        computeFor(millis);
        NativeAgent.clearTaskTag();
      }, "spinner-" + (char) ('a' + i % 26));
      threads[i].start();
    }
    joinAll(threads);
    System.out.println("spinners=" + spinners + " cpus=" + Runtime.getRuntime().availableProcessors());
  }

  static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  public static void main(String[] args) throws Exception {
    String workload = args[0];
    long millis = (long) (Double.parseDouble(args.length > 1 ? args[1] : "2") * 1000);
    switch (workload) {
      case "serialization":
        serializeFor(millis);
        break;
      case "compute":
        computeFor(millis);
        break;
      case "threads": {
        int count = Integer.parseInt(args[2]);
        CountDownLatch allStarted = new CountDownLatch(count);
        Thread[] threads = startThreads(count, () -> {
          allStarted.countDown();
          try {
            allStarted.await();
          } catch (InterruptedException e) {
            return;
          }
          computeFor(20);
        });
        joinAll(threads);
        computeFor(millis);
        System.out.println("threads=" + count);
        break;
      }
      case "classchurn":
        classChurn(millis);
        break;
      case "gcchurn": {
        Thread[] threads = startThreads(2, () -> allocateFor(millis));
        joinAll(threads);
        break;
      }
      case "exit": {
        // Busy threads keep sampling while the JVM exits under them.
        startThreads(3, () -> computeFor(60_000));
        computeFor(millis);
        System.out.println("exiting");
        System.exit(0);
        break;
      }
      case "tagged": {
        // Each worker runs as "task" 100+i of stage 7; odd workers end without clearing the tag.
        System.out.println("loaded=" + NativeAgent.isLoaded());
        int workers = 4;
        Thread[] threads = new Thread[workers];
        for (int i = 0; i < workers; i++) {
          final int task = 100 + i;
          threads[i] = new Thread(() -> {
            NativeAgent.setTaskTag(7, 0, task);
            if (task % 2 == 0) {
              try {
                serializeFor(millis);
              } catch (Exception e) {
                throw new RuntimeException(e);
              }
            } else {
              computeFor(millis);
            }
            if (task % 2 == 0) NativeAgent.clearTaskTag();
          }, "Executor task launch worker for task " + i + ".0 in stage 7.0 (TID " + task + ")");
          threads[i].start();
        }
        int batches = 0;
        long batchBytes = 0;
        for (int i = 0; i < 4; i++) {
          Thread.sleep(millis / 4);
          byte[] batch = NativeAgent.drainBatch();
          if (batch != null) {
            batches++;
            batchBytes += batch.length;
          }
        }
        joinAll(threads);
        byte[] last = NativeAgent.drainBatch();
        if (last != null) {
          batches++;
          batchBytes += last.length;
        }
        System.out.println("batches=" + batches + " bytes=" + batchBytes);
        System.out.println("status=" + NativeAgent.status());
        break;
      }
      case "prometheus": {
        computeFor(millis);
        System.out.println(httpGet("http://127.0.0.1:" + args[2] + "/metrics"));
        break;
      }
      case "sleepers": {
        Thread[] threads = startThreads(3, () -> {
          try {
            Thread.sleep(millis);
          } catch (InterruptedException e) {
            // done
          }
        });
        joinAll(threads);
        break;
      }
      case "pluginstart":
        pluginStart(millis, args[2], args[3]);
        break;
      case "executorid": {
        // A supplementary character crosses JNI as one UTF-8 sequence both ways (issue 15).
        String id = "exec-\ud83d\ude00-7";
        NativeAgent.nameExecutor(id);
        String status = NativeAgent.statusJson();
        boolean roundtrip = status.contains("\"executor_id\":\"" + id + "\"");
        System.out.println("executor.roundtrip=" + roundtrip);
        computeFor(millis);
        break;
      }
      case "threadname": {
        // An emoji (two surrogates in JVMTI's modified UTF-8) and a control character (issue 31).
        Thread worker = new Thread(() -> computeFor(millis), "worker \ud83d\udd25 \u0001ctl");
        worker.start();
        worker.join();
        break;
      }
      case "waits":
        waits(millis);
        break;
      case "starved":
        starved(millis, Integer.parseInt(args[2]));
        break;
      case "monitors":
        monitors(millis, args[2]);
        break;
      case "jvmmemory":
        jvmMemory(millis, args[2]);
        break;
      case "tasksleep": {
        // `tasksleep SECONDS N`: N task-tagged threads that only sleep (bench: what wall
        // sampling costs per waiting task thread).
        int count = Integer.parseInt(args[2]);
        Thread[] threads = startThreads(count, () -> {
          NativeAgent.tagCurrentThread(1, 0, Thread.currentThread().getId());
          try {
            Thread.sleep(millis);
          } catch (InterruptedException e) {
            // done
          }
          NativeAgent.untagCurrentThread();
        });
        joinAll(threads);
        break;
      }
      case "taskloop": {
        // `taskloop SECONDS N TASK_MS`: N threads running tasks back to back for SECONDS, each a
        // tagged sleep of TASK_MS and 2 ms untagged between them (bench: what the agent costs
        // per short task that waits, as a PySpark task waits on its worker).
        int count = Integer.parseInt(args[2]);
        long taskMillis = Long.parseLong(args[3]);
        long end = System.nanoTime() + millis * 1_000_000L;
        java.util.concurrent.atomic.AtomicLong tasks = new java.util.concurrent.atomic.AtomicLong();
        Thread[] threads = startThreads(count, () -> {
          try {
            while (System.nanoTime() < end) {
              NativeAgent.tagCurrentThread(1, 0, tasks.incrementAndGet());
              Thread.sleep(taskMillis);
              NativeAgent.untagCurrentThread();
              Thread.sleep(2);
            }
          } catch (InterruptedException e) {
            // done
          }
        });
        joinAll(threads);
        System.out.println("tasks=" + tasks.get());
        break;
      }
      case "debugflag": {
        // What HotSpot now says of -XX:DebugNonSafepoints, after the agent's start.
        com.sun.management.VMOption option =
            java.lang.management.ManagementFactory.getPlatformMXBean(
                    com.sun.management.HotSpotDiagnosticMXBean.class)
                .getVMOption("DebugNonSafepoints");
        computeFor(millis);
        System.out.println("DebugNonSafepoints=" + option.getValue() + " origin="
            + option.getOrigin());
        System.out.println("status=" + NativeAgent.statusJson());
        break;
      }
      case "noagent":
        System.out.println("loaded=" + NativeAgent.isLoaded() + " status=" + NativeAgent.statusJson());
        NativeAgent.tagCurrentThread(1, 0, 1);
        NativeAgent.untagCurrentThread();
        System.out.println("batch=" + NativeAgent.drainBatchOrNull());
        break;
      default:
        throw new IllegalArgumentException("unknown workload " + workload);
    }
    System.out.println("done " + workload + " sink=" + (sink & 1));
  }
}
