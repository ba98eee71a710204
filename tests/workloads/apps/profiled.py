"""Workloads whose cause only the agent's profile shows: the event log calls all of it run time.

spark-submit profiled.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json; generate.py runs
these with the agent and the plugin, manifest "profile": true, and keeps each run's
profile.sparkprof beside its event log).

What the JVM profile can see of a PySpark application: a task thread that waits on its Python
worker (python_wait) whatever the worker does -- computing, sleeping, waiting for a lock or for an
HTTP server -- and the JVM's own work and waits. So a Python-side lock or a slow call made from
Python is labelled by what the JVM profile shows: python-bound. PySpark cannot plant Java
serialization of data (its records cross the JVM as pickled byte arrays, which the JVM's
serializer copies whole; SQL rows use Spark's own row serializer): no workload here claims it.
"""

import fcntl
import http.server
import os
import subprocess
import sys
import threading
import time
import urllib.request

from pyspark.sql import functions as F

from common import job, main

ROWS = 200_000


def words(spark, rows=ROWS, partitions=8):
    return spark.range(0, rows, 1, partitions).select(
        F.concat(F.lit("order-"), F.col("id")).alias("word"))


def checksum(word):
    """Row-at-a-time Python work: a string hashed character by character, 40 rounds."""
    value = 0
    for _ in range(40):
        for character in word:
            value = (value * 31 + ord(character)) % 1_000_000_007
    return value


def slow_python_udf(spark, scratch):
    """A row-at-a-time Python UDF with a pure-Python loop per row: task threads wait on their
    Python workers for most of the stage."""
    job(spark, "slow python udf: checksum words")
    udf = F.udf(checksum, "long")
    words(spark).select(udf("word").alias("c")).agg(F.sum("c")).collect()


def heavy_map_in_pandas(spark, scratch):
    """mapInPandas whose function loops over its batch's rows in Python (Series.apply): Arrow
    batches, but the Python code itself is the cost."""
    job(spark, "heavy mapInPandas: checksum words")

    def checksums(batches):
        for batch in batches:
            yield batch.assign(c=batch["word"].apply(checksum))[["c"]]

    words(spark).mapInPandas(checksums, "c long").agg(F.sum("c")).collect()


def builtin_checksum(spark, scratch):
    """The control of the two above: a checksum of every word with Spark's builtin functions,
    no Python worker."""
    job(spark, "builtin checksum: checksum words")
    words(spark).select(F.xxhash64("word").alias("c")).agg(F.sum(F.col("c") % 1000)).collect()


def tiny_python_partitions(spark, scratch):
    """An RDD lambda over 2000 partitions of 10 integers: every task is one round trip to a
    Python worker for almost no work."""
    job(spark, "tiny python partitions: double numbers")
    spark.sparkContext.parallelize(range(20_000), 2000).map(lambda x: x * 2).sum()


def few_python_partitions(spark, scratch):
    """The control: the same RDD lambda over 4 partitions."""
    job(spark, "few python partitions: double numbers")
    spark.sparkContext.parallelize(range(20_000), 4).map(lambda x: x * 2).sum()


def python_lock(spark, scratch):
    """A UDF that takes a lock shared by every task of the application (fcntl.flock on one file:
    each Python worker is its own process, so a threading.Lock would not be shared) and works
    2 ms under it: the tasks of both executors run one at a time. The JVM holds no lock: its
    task threads wait on their Python workers."""
    lock_path = os.path.join(scratch, "udf.lock")
    open(lock_path, "w").close()

    def locked_lookup(value):
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            deadline = time.perf_counter() + 0.002
            while time.perf_counter() < deadline:
                pass
            fcntl.flock(lock, fcntl.LOCK_UN)
        return value % 7

    job(spark, "python lock: lookup under a shared lock")
    udf = F.udf(locked_lookup, "long")
    spark.range(0, 6000, 1, 4).select(udf("id").alias("c")).agg(F.sum("c")).collect()


class SlowHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        time.sleep(0.02)
        body = str(len(self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def slow_external_call(spark, scratch):
    """A UDF that asks a slow HTTP service (on the driver's host, 20 ms an answer) for every row:
    the JVM sees its task threads waiting on their Python workers."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/lookup/"

    def lookup(value):
        with urllib.request.urlopen(url + str(value), timeout=30) as response:
            return int(response.read())

    try:
        job(spark, "slow external call: lookup per row")
        udf = F.udf(lookup, "long")
        spark.range(0, 1200, 1, 4).select(udf("id").alias("c")).agg(F.sum("c")).collect()
    finally:
        server.shutdown()


def cpu_work(spark, description, rows=6_000_000):
    """A CPU-bound stage in the JVM: 8 tasks hashing strings with builtin functions."""
    job(spark, description)
    spark.range(0, rows, 1, 8).select(
        F.sha2(F.concat(F.lit("k"), F.col("id").cast("string")), 256).alias("h")).agg(
        F.max("h"), F.count("*")).collect()


def oversubscribed_cpu(spark, scratch):
    """Executors given 4 task slots on a 2-core host while two other processes burn a CPU each:
    task threads are runnable but wait for a core."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        # Sized so the stage is most of the run (its planted run delay then matters to the run).
        cpu_work(spark, "oversubscribed cpu: hash strings", rows=24_000_000)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def own_cpu(spark, scratch):
    """The control: the same stage, one task slot per core, nothing else burning CPU."""
    cpu_work(spark, "own cpu: hash strings", rows=24_000_000)


def cpu_quota(spark, scratch):
    """Two task slots in a container-like cgroup whose CPU quota is half a CPU (manifest
    "cpu_quota": the Worker and its executor run in it): the threads wait while it is throttled."""
    cpu_work(spark, "cpu quota: hash strings")


def python_driver_busy(spark, scratch):
    """The driver collects 500k rows and scores each in its own Python loop (score_on_driver)
    between two short jobs, while the executors stay allocated. Run under sparkprof's Python
    driver sampler (manifest "python_driver": true: spark.pyspark.driver.python=sparkprof-python),
    which names the function."""
    job(spark, "python driver busy: collect 500k rows to the driver")
    rows = spark.range(0, 500_000, 1, 4).collect()
    scores = score_on_driver(rows)
    job(spark, "python driver busy: a job with the scores")
    spark.sparkContext.parallelize(scores[:1000], 4).count()


def score_on_driver(rows):
    """The driver's own per-row work: the arithmetic of checksum, written out here."""
    scores = []
    for row in rows:
        value = 0
        for _ in range(40):
            for character in "order-%d" % row.id:
                value = (value * 31 + ord(character)) % 1_000_000_007
        scores.append(value)
    return scores


WORKLOADS = {f.__name__: f for f in [
    slow_python_udf, heavy_map_in_pandas, builtin_checksum, tiny_python_partitions,
    few_python_partitions, python_lock, slow_external_call, oversubscribed_cpu, own_cpu,
    cpu_quota, python_driver_busy]}

if __name__ == "__main__":
    main(WORKLOADS)
