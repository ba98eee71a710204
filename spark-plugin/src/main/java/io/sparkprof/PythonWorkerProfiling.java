package io.sparkprof;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.SparkConf;

/**
 * PySpark workers sampled per task. At executor start, before its first Python task, this writes
 * sparkprof's daemon ({@code sparkprof_pyspark_daemon.py}, a resource of this jar) and its settings
 * into the executor's working directory, where Spark starts the daemon ({@code python -m}, so the
 * directory is on the daemon's {@code sys.path}), makes the spool directory the workers write
 * their per-task files to, and sets {@code spark.python.daemon.module} in the executor's own
 * SparkConf (Spark's PythonWorkerFactory reads it when the first Python task needs a worker). At
 * every flush the files are handed to the native agent ({@link NativeAgent#addPythonProfile}),
 * which puts them into the next batch under the JVM frame that waited on the worker.
 *
 * <p>Off, with one log line saying why, when: the user set their own daemon module; Spark's
 * daemon is off ({@code spark.python.use.daemon=false}: workers are then started one per task
 * and not sampled); the executor runs in the driver (local mode, whose working directory is the
 * user's); or the working directory cannot be written.
 */
final class PythonWorkerProfiling {
  static final String DAEMON_MODULE = "sparkprof_pyspark_daemon";
  static final String SETTINGS_FILE = "sparkprof_pyspark.json";
  static final String SPOOL_DIRECTORY = ".sparkprof-python";
  static final String FILE_SUFFIX = ".pyprof";
  private static final String RESOURCE = "/io/sparkprof/python/" + DAEMON_MODULE + ".py";
  // Bounds of one flush: the agent's own queue holds at most 4096 files / 16 MiB.
  static final int MAX_FILES_PER_FLUSH = 2048;
  static final long MAX_BYTES_PER_FLUSH = 8L << 20;
  static final long MAX_FILE_BYTES = 1L << 20;  // native-agent/python_profile.h
  static final int MAX_SPOOL_FILES = 1000;      // the workers stop writing beyond this

  private final Path spool;
  private final AtomicLong filesRead = new AtomicLong();
  private final AtomicLong filesRefused = new AtomicLong();
  private volatile boolean refusalLogged;

  private PythonWorkerProfiling(Path spool) {
    this.spool = spool;
  }

  /** Sets the workers up, or returns null after one log line saying why not. Never throws. */
  static PythonWorkerProfiling setUp(SparkConf conf, String executorId, SparkProfConfig config,
      String driverPython) {
    try {
      if (!config.pythonEnabled()) return null;
      String reason = unsupportedReason(conf, executorId);
      if (reason != null) {
        Log.warn("Python workers unprofiled: " + reason);
        return null;
      }
      Path directory = Paths.get(System.getProperty("user.dir")).toAbsolutePath();
      Path spool = directory.resolve(SPOOL_DIRECTORY);
      makePrivateDirectory(spool);
      writeAtomically(directory, SETTINGS_FILE, settingsJson(spool, config));
      writeAtomically(directory, DAEMON_MODULE + ".py", daemonSource());
      // A daemon module Python cannot find would fail every Python task: ask the workers'
      // interpreter first (-m from this directory, as Spark starts the daemon).
      String probe = probe(conf, driverPython, directory);
      if (probe != null) {
        Log.warn("Python workers unprofiled: " + probe);
        return null;
      }
      conf.set("spark.python.daemon.module", DAEMON_MODULE);
      return new PythonWorkerProfiling(spool);
    } catch (IOException | RuntimeException e) {
      Log.warn("Python workers unprofiled: could not set up sparkprof's daemon in the "
          + "executor's working directory: " + e);
      return null;
    }
  }

  static final long PROBE_TIMEOUT_MS = 10_000;

  /** Key of the driver plugin's extraConf entry naming the workers' interpreter. */
  static final String DRIVER_PYTHON_EXEC = "pythonExec";

  /**
   * The interpreter Spark starts the workers with. The driver decides it (PySpark's
   * {@code pythonExec}: {@code spark.pyspark.python}, which spark-submit passes to the Python
   * driver as PYSPARK_PYTHON, else the driver's PYSPARK_PYTHON, else python3) and every Python
   * task carries it, so the driver plugin computes it the same way ({@link #driverChoice}) and
   * hands it to the executors in its extraConf; an executor's own environment is only the
   * fallback (an older driver plugin, or none).
   */
  static String pythonExecutable(SparkConf conf, String fromDriver) {
    if (fromDriver != null && !fromDriver.isEmpty()) return fromDriver;
    return driverChoice(conf, System.getenv("PYSPARK_PYTHON"));
  }

  /** PySpark's choice from the conf and a PYSPARK_PYTHON value (null when unset). */
  static String driverChoice(SparkConf conf, String environment) {
    String configured = conf.get("spark.pyspark.python", "");
    if (!configured.isEmpty()) return configured;
    return environment != null && !environment.isEmpty() ? environment : "python3";
  }

  /**
   * Runs {@code python -m sparkprof_pyspark_daemon --sparkprof-probe} in the working directory;
   * null when it answers, else why not (the interpreter missing, -m not finding the module from
   * here, e.g. under PYTHONSAFEPATH, or no answer within PROBE_TIMEOUT_MS).
   */
  static String probe(SparkConf conf, String driverPython, Path directory) {
    String python = pythonExecutable(conf, driverPython);
    Process process = null;
    try {
      ProcessBuilder builder =
          new ProcessBuilder(python, "-m", DAEMON_MODULE, "--sparkprof-probe")
              .directory(directory.toFile())
              .redirectErrorStream(true);
      process = builder.start();
      process.getOutputStream().close();
      // The probe writes one line: it fits the pipe, so waiting first cannot block it.
      if (!process.waitFor(PROBE_TIMEOUT_MS, java.util.concurrent.TimeUnit.MILLISECONDS)) {
        return "'" + python + "' did not answer the daemon probe within " + PROBE_TIMEOUT_MS
            + " ms";
      }
      byte[] output = new byte[4096];
      int length = 0;
      int read;
      InputStream in = process.getInputStream();
      while (length < output.length && (read = in.read(output, length, output.length - length)) > 0) {
        length += read;
      }
      String text = new String(output, 0, length, StandardCharsets.UTF_8).trim();
      if (process.exitValue() == 0 && text.contains("sparkprof-daemon-ok")) return null;
      if (text.length() > 300) text = text.substring(0, 300) + "...";
      return "'" + python + " -m " + DAEMON_MODULE + "' fails in " + directory + " (exit "
          + process.exitValue() + "): " + text.replaceAll("\\s+", " ");
    } catch (IOException e) {
      return "cannot run '" + python + "': " + e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted while probing '" + python + "'";
    } finally {
      if (process != null) process.destroyForcibly();
    }
  }

  /** Why this executor's Python workers cannot be sampled; null when they can. */
  static String unsupportedReason(SparkConf conf, String executorId) {
    if ("driver".equals(executorId)) {
      return "the executor runs in the driver (local mode), whose working directory is the "
          + "application's own";
    }
    String module = conf.get("spark.python.daemon.module", "");
    if (!module.isEmpty() && !module.equals(DAEMON_MODULE)) {
      return "spark.python.daemon.module is set to '" + module + "'";
    }
    if (!conf.getBoolean("spark.python.use.daemon", true)) {
      return "spark.python.use.daemon is false (each worker is started for one task)";
    }
    if (!System.getProperty("os.name", "").startsWith("Linux")) {
      return "Python workers are sampled on Linux only";
    }
    return null;
  }

  /**
   * Hands the workers' files to the agent (bounded per call) and deletes them; runs on the flush
   * thread before the agent's batch is drained. Never throws.
   */
  void collect() {
    int files = 0;
    long bytes = 0;
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(spool, "*" + FILE_SUFFIX)) {
      for (Path file : entries) {
        if (files >= MAX_FILES_PER_FLUSH || bytes >= MAX_BYTES_PER_FLUSH) break;
        byte[] content = readBounded(file);
        Files.deleteIfExists(file);
        if (content == null) {
          refused("a file above " + MAX_FILE_BYTES + " bytes or not a regular file: " + file);
          continue;
        }
        files++;
        bytes += content.length;
        int outcome = NativeAgent.addPythonProfile(content);
        if (outcome == 0) {
          filesRead.incrementAndGet();
        } else {
          refused("the agent refused a file (outcome " + outcome + ")");
        }
      }
    } catch (IOException | RuntimeException | LinkageError e) {
      refused("reading " + spool + ": " + e);
    }
  }

  long filesRead() {
    return filesRead.get();
  }

  long filesRefused() {
    return filesRefused.get();
  }

  private void refused(String why) {
    filesRefused.incrementAndGet();
    if (!refusalLogged) {
      refusalLogged = true;
      Log.warn("a Python worker profile was not used: " + why
          + " (further ones are counted, not logged)");
    }
  }

  /** The file's bytes; null when it is above MAX_FILE_BYTES or not a regular file. */
  private static byte[] readBounded(Path file) throws IOException {
    if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) return null;
    long size = Files.size(file);
    if (size > MAX_FILE_BYTES) return null;
    try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
      // One byte more than its size: a file that grew past the bound since is still refused.
      byte[] buffer = new byte[(int) size + 1];
      int length = 0;
      int read;
      while (length < buffer.length
          && (read = in.read(buffer, length, buffer.length - length)) > 0) {
        length += read;
      }
      if (length > size) return null;
      byte[] content = new byte[length];
      System.arraycopy(buffer, 0, content, 0, length);
      return content;
    }
  }

  private static void makePrivateDirectory(Path spool) throws IOException {
    try {
      Files.createDirectory(spool,
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (FileAlreadyExistsException e) {
      // An executor restarted in the same directory: only a real directory of ours will do.
      if (!Files.isDirectory(spool, LinkOption.NOFOLLOW_LINKS)) {
        throw new IOException(spool + " exists and is not a directory", e);
      }
    }
  }

  private static void writeAtomically(Path directory, String name, byte[] content)
      throws IOException {
    Path temporary = Files.createTempFile(directory, "." + name, ".tmp");
    try {
      try (OutputStream out = Files.newOutputStream(temporary, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        out.write(content);
      }
      Files.move(temporary, directory.resolve(name), StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(temporary);
    }
  }

  private static byte[] daemonSource() throws IOException {
    try (InputStream in = PythonWorkerProfiling.class.getResourceAsStream(RESOURCE)) {
      if (in == null) throw new IOException("the jar holds no " + RESOURCE);
      java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
      byte[] buffer = new byte[16384];
      int read;
      while ((read = in.read(buffer)) > 0) out.write(buffer, 0, read);
      return out.toByteArray();
    }
  }

  static byte[] settingsJson(Path spool, SparkProfConfig config) {
    String json = "{\"spool\": " + jsonString(spool.toString())
        + ", \"interval_ms\": " + config.pythonIntervalMs()
        + ", \"max_stacks\": 2000"
        + ", \"max_files\": " + MAX_SPOOL_FILES
        + ", \"flush_s\": " + Math.max(1, config.flushIntervalMs() / 1000)
        + "}\n";
    return json.getBytes(StandardCharsets.UTF_8);
  }

  static String jsonString(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20 || c == 0x7f) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append('"').toString();
  }
}
