import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The real work the e2e executors run on their task threads. Work is sized in units (records or
 * megabytes), never in time, so a skewed partition really holds ten times the data and a loaded
 * machine only makes everything slower.
 */
final class E2eWorkloads {
  static final String SERIALIZE = "serialize";
  static final String SKEWED_AGGREGATE = "skewed-aggregate";
  static final String WRITE_FILES = "write-files";

  private E2eWorkloads() {}

  /** What a task hands back (Spark serializes the task result too). */
  static final class TaskOutput implements Serializable {
    private static final long serialVersionUID = 1L;
    long recordsRead;
    long bytesWritten;
    long recordsWritten;
    long checksum;
  }

  /** A row of an object graph: strings, arrays, a map and a link to a neighbour. */
  static final class Row implements Serializable {
    private static final long serialVersionUID = 1L;
    final String key;
    final long[] values = new long[24];
    final Map<String, Integer> attributes = new HashMap<>();
    final List<String> tags = new ArrayList<>();
    Row neighbour;

    Row(int partition, int i) {
      key = "p" + partition + "-row-" + i;
      for (int j = 0; j < values.length; j++) values[j] = i * 31L + j;
      for (int j = 0; j < 6; j++) attributes.put("attribute-" + j, i ^ j);
      for (int j = 0; j < 3; j++) tags.add("tag-" + (i + j) % 17);
    }
  }

  static TaskOutput run(String workload, int partition, int units, String outputDir)
      throws IOException {
    switch (workload) {
      case SERIALIZE: return serialize(partition, units);
      case SKEWED_AGGREGATE: return aggregate(partition, units);
      case WRITE_FILES: return writeFiles(partition, units, outputDir);
      default: throw new IllegalArgumentException("unknown workload " + workload);
    }
  }

  /** Serialization-heavy: `units` rounds of ObjectOutputStream over a linked graph of rows. */
  static TaskOutput serialize(int partition, int units) throws IOException {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      Row row = new Row(partition, i);
      if (i > 0) row.neighbour = rows.get(i - 1);
      rows.add(row);
    }
    TaskOutput output = new TaskOutput();
    for (int round = 0; round < units; round++) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(1 << 16);
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        out.writeObject(rows);
      }
      output.checksum += bytes.size();
      output.recordsRead += rows.size();
    }
    return output;
  }

  /** Compute: `units` thousand records hashed into groups and sorted per group. */
  static TaskOutput aggregate(int partition, int units) {
    Random random = new Random(partition);
    TaskOutput output = new TaskOutput();
    for (int round = 0; round < units; round++) {
      int[] keys = new int[1000 * 8];
      for (int i = 0; i < keys.length; i++) keys[i] = random.nextInt(5000);
      Arrays.sort(keys);
      long distinct = 1;
      for (int i = 1; i < keys.length; i++) distinct += keys[i] != keys[i - 1] ? 1 : 0;
      output.checksum += distinct;
      output.recordsRead += keys.length;
    }
    return output;
  }

  /**
   * Writes `units` files of about 1 MiB of CSV records (formatted and encoded like a text output
   * format would) under outputDir and forces them to disk.
   */
  static TaskOutput writeFiles(int partition, int units, String outputDir) throws IOException {
    Path dir = Paths.get(outputDir);
    Files.createDirectories(dir);
    TaskOutput output = new TaskOutput();
    StringBuilder line = new StringBuilder();
    for (int file = 0; file < units; file++) {
      Path path = dir.resolve(String.format("part-%05d-%03d.csv", partition, file));
      try (FileOutputStream stream = new FileOutputStream(path.toFile());
           BufferedOutputStream out = new BufferedOutputStream(stream, 1 << 16)) {
        long written = 0;
        while (written < (1 << 20)) {
          long record = output.recordsWritten++;
          line.setLength(0);
          line.append(partition).append(',').append(record).append(',')
              .append(Long.toHexString(record * 0x9E3779B97F4A7C15L)).append(',')
              .append(record % 97 / 7.0).append(",\"sample text ").append(record % 13).append("\"\n");
          byte[] bytes = line.toString().getBytes(StandardCharsets.UTF_8);
          out.write(bytes);
          written += bytes.length;
        }
        out.flush();
        stream.getFD().sync();
        output.bytesWritten += written;
      }
    }
    return output;
  }
}
