#!/usr/bin/env python3
"""Runs a test class inside a real Spark distribution, the way users run applications:
spark-submit with the plugin jar in --jars and, optionally, the agent in --driver-java-options.

Usage: run_in_spark.py --spark-home HOME --plugin-jar JAR --test-jar JAR [--agent LIB] -- ARGS...
Exits 77 (skipped) when the Spark home is missing (scripts/install-spark.sh installs it).
"""
import argparse
import os
import subprocess
import sys

SKIPPED = 77


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--plugin-jar", required=True)
    parser.add_argument("--test-jar", required=True)
    parser.add_argument("--main-class", default="io.sparkprof.SparkPluginTest")
    parser.add_argument("--agent")
    parser.add_argument("--timeout", type=float, default=300)
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
    print("+ " + " ".join(command), flush=True)
    try:
        return subprocess.run(command, env=env, timeout=options.timeout).returncode
    except subprocess.TimeoutExpired:
        print("FAIL: timed out after %.0f s" % options.timeout)
        return 1


if __name__ == "__main__":
    sys.exit(main())
