#!/usr/bin/env python3
"""Runs a test class inside a real Spark distribution, the way users run applications:
spark-submit with the plugin jar in --jars and, optionally, the agent in --driver-java-options.

Usage: run_in_spark.py --spark-home HOME --plugin-jar JAR --test-jar JAR [--agent LIB]
                       [--hide-bundled-libraries] ARGS...
--hide-bundled-libraries runs Spark in a private mount namespace where the shared libraries that
the jar bundles for the driver library (driver-dependencies.txt) are hidden from the system, as on
a Spark image that lacks them, so only the jar's copies can serve.
Exits 77 (skipped) when the Spark home is missing (scripts/install-spark.sh installs it) or the
namespace cannot be made (not root).
"""
import argparse
import ctypes.util
import os
import shutil
import subprocess
import sys
import zipfile

SKIPPED = 77


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--plugin-jar", required=True)
    parser.add_argument("--test-jar", required=True)
    parser.add_argument("--main-class", default="io.sparkprof.SparkPluginTest")
    parser.add_argument("--agent")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--hide-bundled-libraries", action="store_true")
    parser.add_argument("args", nargs="*")
    options = parser.parse_args()
    submit = os.path.join(options.spark_home, "bin", "spark-submit")
    if not os.access(submit, os.X_OK):
        print("skipped: no Spark at %s (run scripts/install-spark.sh)" % options.spark_home)
        return SKIPPED
    env = dict(os.environ, SPARK_HOME=os.path.realpath(options.spark_home),
               SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    env.pop("SPARK_CONF_DIR", None)
    command = [submit, "--master", "local[2,3]", "--driver-memory", "1g",
               "--conf", "spark.ui.enabled=false",
               "--jars", options.plugin_jar, "--class", options.main_class]
    if options.agent:
        command += ["--driver-java-options", "-agentpath:%s=interval=5ms" % options.agent]
    command += [options.test_jar] + options.args
    if options.hide_bundled_libraries:
        hidden = hide_command(options.plugin_jar)
        if hidden is None:
            return SKIPPED
        command = hidden + command
    print("+ " + " ".join(command), flush=True)
    try:
        return subprocess.run(command, env=env, timeout=options.timeout).returncode
    except subprocess.TimeoutExpired:
        print("FAIL: timed out after %.0f s" % options.timeout)
        return 1


def system_path(soname):
    """Where the dynamic linker finds soname on this machine, or None."""
    try:
        listing = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    except OSError:
        return None
    for line in listing.splitlines():
        if line.strip().startswith(soname + " ") and "=>" in line:
            return line.split("=>", 1)[1].strip()
    return None


def hide_command(jar):
    """unshare + bind mounts of /dev/null over each bundled library's system copy."""
    with zipfile.ZipFile(jar) as archive:
        try:
            listed = archive.read("io/sparkprof/native/linux-x86_64/driver-dependencies.txt")
        except KeyError:
            print("FAIL the jar has no driver-dependencies.txt")
            return None
    names = listed.decode().split()
    if not names:
        print("FAIL the jar bundles no driver dependency to hide")
        return None
    mounts = []
    for name in names:
        path = system_path(name)
        if path:
            mounts.append("mount --bind /dev/null %s" % path)
    if not shutil.which("unshare") or os.geteuid() != 0:
        print("skipped: hiding system libraries needs root and unshare")
        return None
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True)
    if probe.returncode != 0:
        print("skipped: unshare --mount is not permitted here")
        return None
    print("hiding the system's %s" % ", ".join(names), flush=True)
    script = " && ".join(mounts + ['exec "$@"'])
    return ["unshare", "--mount", "sh", "-c", script, "sh"]


if __name__ == "__main__":
    sys.exit(main())
