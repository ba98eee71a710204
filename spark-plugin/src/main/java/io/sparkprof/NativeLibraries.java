package io.sparkprof;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;

/**
 * Loads sparkprof's native libraries out of the plugin jar, for JVMs that were not given them on
 * the command line. The jar carries them as resources under {@value #RESOURCE_DIRECTORY}. Each is
 * copied to a private temporary file (a fresh name in {@code java.io.tmpdir}, readable and
 * writable by the owner only), loaded with {@code System.load} and deleted at once: Linux keeps
 * the mapping of a deleted file.
 *
 * <p>Natives bind to the class loader of the class that calls {@code System.load}: this class's.
 * {@link NativeAgent} calls package-private members here, which only links within one loader, so
 * its natives resolve in what this class loaded; {@code NativeAggregator} comes from the same jar
 * and so from the same loader. A second loader with its own copy of these classes would load its
 * own copy of a library (see {@link NativeAgent#startFromJar} for what the agent does then).
 *
 * <p>Each library is tried at most once per class loader; later calls return the first result.
 * Nothing here throws; a failure is logged once and returned as the reason.
 */
public final class NativeLibraries {
  /** Where the plugin jar keeps the libraries (a resource path, not a file path). */
  public static final String RESOURCE_DIRECTORY = "io/sparkprof/native/linux-x86_64/";
  /** The agent, for every JVM that runs tasks. */
  public static final String AGENT_LIBRARY = "libsparkprof.so";
  /** The driver-side aggregator and engine. */
  public static final String DRIVER_LIBRARY = "libsparkprof_driver.so";

  /** Library name to the first attempt's result: null (loaded) or the reason it failed. */
  private static final Map<String, String> RESULTS = new HashMap<>();  // guarded by the class

  private NativeLibraries() {}

  /**
   * Loads libsparkprof_driver.so from the plugin jar, for a driver given neither
   * {@code -agentpath} nor {@code spark.sparkprof.libraryPath}. Returns null when it is loaded
   * (now or by an earlier call), else the reason the driver side stays off, logged as one
   * {@code sparkprof:} line by the first call. Never throws.
   */
  public static synchronized String loadDriverLibraryFromJar() {
    boolean firstTry = !RESULTS.containsKey(DRIVER_LIBRARY);
    // Shared libraries the driver library needs beyond glibc and libstdc++ (libsimdjson), in load
    // order: once loaded, the dynamic linker finds them by soname, so a node need not have them.
    // One that fails is left to the system's copy (the driver library's own load then tells).
    if (firstTry) loadDriverDependenciesFromJar();
    String failure = loadOnce(DRIVER_LIBRARY);
    if (failure == null) return null;
    String reason = "driver: " + failure + "; no metrics or flame graphs";
    if (firstTry) log(reason);
    return reason;
  }

  /**
   * Loads the jar's copies of the driver library's dependencies (libsimdjson), so that a driver
   * library loaded afterwards, from the jar or from a path, finds them by soname even on a node
   * that lacks them. Failures are silent: the system's copy may serve, and the driver library's
   * own load reports what is missing.
   */
  public static synchronized void loadDriverDependenciesFromJar() {
    for (String dependency : bundledDriverDependencies()) loadOnce(dependency);
  }

  /** The names listed in the jar's {@value #DRIVER_DEPENDENCIES}; none when it is absent. */
  static java.util.List<String> bundledDriverDependencies() {
    java.util.List<String> names = new java.util.ArrayList<>();
    try (InputStream in = NativeLibraries.class.getResourceAsStream(
            "/" + RESOURCE_DIRECTORY + DRIVER_DEPENDENCIES)) {
      if (in == null) return names;
      java.io.BufferedReader reader = new java.io.BufferedReader(
          new java.io.InputStreamReader(in, java.nio.charset.StandardCharsets.UTF_8));
      for (String line = reader.readLine(); line != null; line = reader.readLine()) {
        line = line.trim();
        if (line.matches("lib[A-Za-z0-9_.+-]+\\.so[0-9.]*")) names.add(line);
      }
    } catch (IOException | RuntimeException e) {
      names.clear();
    }
    return names;
  }

  /** The resource listing the driver library's bundled dependencies, one file name a line. */
  static final String DRIVER_DEPENDENCIES = "driver-dependencies.txt";

  /** libsparkprof.so, for {@link NativeAgent#startFromJar}: null or the reason (not logged). */
  static String loadAgentLibraryFromJar() {
    return loadOnce(AGENT_LIBRARY);
  }

  /** Where {@link #log} goes once a plugin side set it ({@link Log}); null: stderr. */
  private static volatile java.util.function.Consumer<String> logSink;

  /**
   * Warnings of these classes (and {@link NativeAgent}'s): through {@link Log} (Spark's logger)
   * once a plugin side called {@link #logTo}, else a {@code sparkprof:} line on stderr. These
   * classes cannot call {@link Log} themselves: they must load and be tested without Spark's
   * classes (slf4j included).
   */
  static void log(String message) {
    java.util.function.Consumer<String> sink = logSink;
    if (sink != null) {
      sink.accept(message);
    } else {
      System.err.println("sparkprof: " + message);
    }
  }

  static void logTo(java.util.function.Consumer<String> sink) {
    logSink = sink;
  }

  /** Null when this JVM can load the libraries the jar carries, else why not. */
  static String unsupportedPlatform() {
    String os = System.getProperty("os.name", "?");
    String arch = System.getProperty("os.arch", "?");
    if (os.equals("Linux") && (arch.equals("amd64") || arch.equals("x86_64"))) return null;
    return "the plugin jar carries native libraries for Linux x86_64 only; this JVM runs on "
        + os + " " + arch;
  }

  private static synchronized String loadOnce(String library) {
    if (RESULTS.containsKey(library)) return RESULTS.get(library);
    String failure;
    try {
      failure = unsupportedPlatform();
      if (failure == null) failure = extractAndLoad(library);
    } catch (RuntimeException | LinkageError e) {
      failure = "cannot load " + library + " from the plugin jar: " + e;
    }
    RESULTS.put(library, failure);
    return failure;
  }

  private static String extractAndLoad(String library) {
    String resource = RESOURCE_DIRECTORY + library;
    Path directory = Paths.get(System.getProperty("java.io.tmpdir"));
    Path file = null;
    try (InputStream in = NativeLibraries.class.getResourceAsStream("/" + resource)) {
      if (in == null) return "the plugin jar has no " + resource;
      file = Files.createTempFile(directory, "sparkprof-", "-" + library,
          PosixFilePermissions.asFileAttribute(
              EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE)));
      // Into the file createTempFile made (exclusively, owner-only); never replaced by name.
      try (OutputStream out = Files.newOutputStream(file, StandardOpenOption.WRITE)) {
        byte[] buffer = new byte[64 * 1024];
        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) out.write(buffer, 0, n);
      }
      System.load(file.toAbsolutePath().toString());
      return null;
    } catch (IOException | UnsatisfiedLinkError | SecurityException
        | UnsupportedOperationException e) {
      String failure = "cannot load " + library + " from the plugin jar: " + e.getMessage();
      if (String.valueOf(e.getMessage()).contains("failed to map segment")) {
        failure += " (is " + directory + " mounted noexec? point java.io.tmpdir elsewhere, or "
            + "install the library and use -agentpath)";
      }
      return failure;
    } finally {
      if (file != null) deleteNow(file);
    }
  }

  /** Deletes the extracted copy (a loaded library stays mapped), or at exit if that fails. */
  private static void deleteNow(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException | SecurityException e) {
      file.toFile().deleteOnExit();
    }
  }
}
