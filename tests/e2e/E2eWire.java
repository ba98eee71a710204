import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.Map;

/**
 * The loopback link between the e2e driver and its executors, in place of Spark's Netty RPC:
 * Java-serialized messages (Spark's RPC uses JavaSerializer too) in frames of a 4-byte big-endian
 * length and the payload. A frame longer than {@link #MAX_FRAME_BYTES} or one that does not
 * deserialize ends the connection with an IOException; it never takes the process down.
 */
final class E2eWire {
  static final int MAX_FRAME_BYTES = 64 << 20;

  private E2eWire() {}

  /** Writes one frame; callers serialize writers on {@code out}. */
  static void write(DataOutputStream out, Serializable message) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream objects = new ObjectOutputStream(bytes)) {
      objects.writeObject(message);
    }
    if (bytes.size() > MAX_FRAME_BYTES) {
      throw new IOException("frame of " + bytes.size() + " bytes exceeds " + MAX_FRAME_BYTES);
    }
    out.writeInt(bytes.size());
    bytes.writeTo(out);
    out.flush();
  }

  /** The next message, or null at a clean end of stream. */
  static Object read(DataInputStream in) throws IOException {
    int length;
    try {
      length = in.readInt();
    } catch (EOFException e) {
      return null;
    }
    if (length < 0 || length > MAX_FRAME_BYTES) {
      throw new IOException("bad frame length " + length);
    }
    byte[] payload = new byte[length];
    in.readFully(payload);
    try (ObjectInputStream objects = new ObjectInputStream(new ByteArrayInputStream(payload))) {
      return objects.readObject();
    } catch (ClassNotFoundException | RuntimeException e) {
      throw new IOException("undecodable frame of " + length + " bytes: " + e, e);
    }
  }

  /** Executor -> driver, first message: the executor asks for the application's conf. */
  static final class RetrieveSparkAppConfig implements Serializable {
    private static final long serialVersionUID = 1L;
  }

  /** Driver -> executor: the conf (spark.* and spark.plugins.internal.conf.* entries). */
  static final class SparkAppConfig implements Serializable {
    private static final long serialVersionUID = 1L;
    final Map<String, String> conf;

    SparkAppConfig(Map<String, String> conf) {
      this.conf = conf;
    }
  }

  /** Executor -> driver: registration; the driver posts ExecutorAdded when it accepts it. */
  static final class RegisterExecutor implements Serializable {
    private static final long serialVersionUID = 1L;
    final String executorId;
    final String host;
    final int cores;
    final long pid;

    RegisterExecutor(String executorId, String host, int cores, long pid) {
      this.executorId = executorId;
      this.host = host;
      this.cores = cores;
      this.pid = pid;
    }
  }

  /** Driver -> executor: registered; the executor now builds its Executor (plugins' init). */
  static final class RegisteredExecutor implements Serializable {
    private static final long serialVersionUID = 1L;
  }

  /** Executor -> driver: plugins are up, tasks may be offered. */
  static final class LaunchedExecutor implements Serializable {
    private static final long serialVersionUID = 1L;
    final String executorId;

    LaunchedExecutor(String executorId) {
      this.executorId = executorId;
    }
  }

  /** Spark's PluginMessage(pluginName, message): what PluginContext.send puts on the wire. */
  static final class PluginMessage implements Serializable {
    private static final long serialVersionUID = 1L;
    final String pluginName;
    final Object message;

    PluginMessage(String pluginName, Object message) {
      this.pluginName = pluginName;
      this.message = message;
    }
  }

  /** Driver -> executor: run one task. */
  static final class LaunchTask implements Serializable {
    private static final long serialVersionUID = 1L;
    final long taskId;
    final int stageId;
    final int stageAttempt;
    final int index;
    final int attemptNumber;
    final int partitionId;
    final int numPartitions;
    final String workload;  // E2eWorkloads kind
    final int units;        // how much work this partition holds
    final String outputDir; // for the writing stage
    final boolean injectFailure;

    LaunchTask(long taskId, int stageId, int stageAttempt, int index, int attemptNumber,
        int partitionId, int numPartitions, String workload, int units, String outputDir,
        boolean injectFailure) {
      this.taskId = taskId;
      this.stageId = stageId;
      this.stageAttempt = stageAttempt;
      this.index = index;
      this.attemptNumber = attemptNumber;
      this.partitionId = partitionId;
      this.numPartitions = numPartitions;
      this.workload = workload;
      this.units = units;
      this.outputDir = outputDir;
      this.injectFailure = injectFailure;
    }
  }

  /** Executor -> driver: a task ended, with the metrics Spark's TaskMetrics would carry. */
  static final class StatusUpdate implements Serializable {
    private static final long serialVersionUID = 1L;
    long taskId;
    String executorId;
    boolean success;
    String error = "";
    String errorClass = "";
    String errorStack = "";
    long deserializeTimeMs;
    long deserializeCpuTimeNs;
    long runTimeMs;
    long cpuTimeNs;
    long gcTimeMs;
    long resultSerializationTimeMs;
    long resultSizeBytes;
    long recordsRead;
    long bytesWritten;
    long recordsWritten;
    long peakExecutionMemoryBytes;
  }

  /**
   * Driver -> executor: answer with {@link FlushBarrierDone} once every profile sample taken
   * before this barrier has been sent. The answer rides behind those batches on the same link and
   * the driver handles both on its dispatcher thread, so when the driver sees the answer, the
   * batches have been through DriverPlugin.receive.
   */
  static final class FlushBarrier implements Serializable {
    private static final long serialVersionUID = 1L;
    final long id;

    FlushBarrier(long id) {
      this.id = id;
    }
  }

  static final class FlushBarrierDone implements Serializable {
    private static final long serialVersionUID = 1L;
    final String executorId;
    final long id;
    final long batchesSent;

    FlushBarrierDone(String executorId, long id, long batchesSent) {
      this.executorId = executorId;
      this.id = id;
      this.batchesSent = batchesSent;
    }
  }

  /** Driver -> executor: stop (Executor.stop: plugins' shutdown, then exit). */
  static final class StopExecutor implements Serializable {
    private static final long serialVersionUID = 1L;
  }
}
