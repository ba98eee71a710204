#!/usr/bin/env python3
"""Checks the plugin jar: it holds the plugin classes and both native libraries (plugin-only
install), no Spark or Scala classes (they are `provided`), the OpenTelemetry SDK relocated under
io/sparkprof/shaded/ (no class outside io/sparkprof/, so none can clash with the user's classpath),
service files only for relocated interfaces or Spark's own extension points naming the plugin's
classes, and Java 8 class files so Spark 3.x JVMs on Java 8 load it."""
import struct
import sys
import zipfile

JAVA_8_MAJOR = 52
# Spark's extension points the jar implements through ServiceLoader (docs/spark-ui.md: the History
# Server loads the sparkprof tab this way).
SPARK_EXTENSION_POINTS = {"org.apache.spark.status.AppHistoryServerPlugin"}


def main(path):
    problems = []
    with zipfile.ZipFile(path) as jar:
        names = jar.namelist()
        for required in ("io/sparkprof/SparkProfPlugin.class",
                         "io/sparkprof/SparkProfExecutorPlugin.class",
                         "io/sparkprof/SparkProfDriverPlugin.class",
                         "io/sparkprof/SparkProfConfig.class",
                         "io/sparkprof/NativeAgent.class",
                         "io/sparkprof/NativeAggregator.class",
                         "io/sparkprof/PythonDriverProfiling.class",
                         "io/sparkprof/python/sparkprof_pyspark_daemon.py",
                         "io/sparkprof/python/sparkprof_driver.py",
                         "io/sparkprof/python/sparkprof-python",
                         "io/sparkprof/native/linux-x86_64/libsparkprof.so",
                         "io/sparkprof/native/linux-x86_64/libsparkprof_driver.so",
                         "io/sparkprof/native/linux-x86_64/driver-dependencies.txt",
                         "io/sparkprof/ApplicationTrace.class",
                         "io/sparkprof/connect/TraceparentInterceptor.class",
                         "io/sparkprof/shaded/io/opentelemetry/sdk/OpenTelemetrySdk.class",
                         "io/sparkprof/shaded/okhttp3/OkHttpClient.class"):
            if required not in names:
                problems.append("missing " + required)
        for name in names:
            if name.startswith(("org/apache/spark/", "scala/", "com/codahale/")):
                problems.append("must not be packaged: " + name)
            if name.endswith(".class") and not name.startswith("io/sparkprof/"):
                problems.append("not relocated under io/sparkprof/shaded: " + name)
            if name.startswith("META-INF/services/") and not name.endswith("/") \
                    and not name.startswith("META-INF/services/io.sparkprof."):
                if name[len("META-INF/services/"):] in SPARK_EXTENSION_POINTS:
                    # Spark's own interface, implemented by the plugin's own classes only.
                    for line in jar.read(name).decode("utf-8").splitlines():
                        line = line.split("#", 1)[0].strip()
                        if line and not line.startswith("io.sparkprof."):
                            problems.append("%s names a class not the plugin's: %s" % (name, line))
                else:
                    problems.append("a service file of an unrelocated interface: " + name)
            if name.endswith(".class"):
                magic, _minor, major = struct.unpack(">IHH", jar.read(name)[:8])
                if magic != 0xCAFEBABE or major > JAVA_8_MAJOR:
                    problems.append("%s: class file version %d, want <= %d (Java 8)"
                                    % (name, major, JAVA_8_MAJOR))
    for problem in problems:
        print("FAIL:", problem)
    print("%s: %d entries, %s" % (path, len(names), "ok" if not problems else "bad"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
