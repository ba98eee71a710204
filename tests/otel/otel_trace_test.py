#!/usr/bin/env python3
"""OpenTelemetry traces of the plugin, received by a real OpenTelemetry Collector
(scripts/install-otelcol.sh: OTLP receiver, file exporter) from a real Spark application.

Usage: otel_trace_test.py --spark-home HOME --plugin-jar JAR --collector BIN --work DIR MODE
MODE:
  grpc, http    tests/otel/otel_app.py through spark-submit (plugin-only, local mode) with
                spark.sparkprof.otel.* and TRACEPARENT set: every span under the given trace id,
                the application span's parent is the given span, the seven phase spans are its
                children and add up to it, every job of report.json is a span under a phase (or
                the application), every stage attempt that ran a span under its job, each with the
                report's duration, ids and figures.
  unreachable   the same application exporting to a closed port: it still succeeds, its report
                is written, and the driver logs one OpenTelemetry line saying the spans were not
                exported.
  connect       a Spark Connect server (SparkConnectServer from the pyspark distribution) with the
                plugin and io.sparkprof.connect.TraceparentInterceptor; a pyspark Connect client
                sends two requests, each with its own traceparent: each request's jobs are spans
                in the caller's trace, under the caller's span, linked to the application span.
Prints PASS or FAIL lines; exits 77 (skipped) when Spark, the collector or (connect) the client
libraries are missing.
"""
import argparse
import glob
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time

SKIPPED = 77
HERE = os.path.dirname(os.path.abspath(__file__))
problems = []


def check(condition, message):
    if not condition:
        problems.append(message)
        print("FAIL " + message, flush=True)
    return condition


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, timeout_s):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if process.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.2)
    return False


class Collector:
    """The real collector, receiving on two loopback ports, writing spans as OTLP JSON lines."""

    def __init__(self, binary, work):
        self.grpc_port = free_port()
        self.http_port = free_port()
        self.spans_file = os.path.join(work, "spans.jsonl")
        config = os.path.join(work, "otelcol.yaml")
        with open(config, "w") as f:
            f.write("""receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
exporters:
  file:
    path: %s
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
""" % (self.grpc_port, self.http_port, self.spans_file))
        self.log = open(os.path.join(work, "otelcol.log"), "w")
        self.process = subprocess.Popen([binary, "--config", config], stdout=self.log,
                                        stderr=subprocess.STDOUT)
        if not (wait_for_port(self.grpc_port, self.process, 30)
                and wait_for_port(self.http_port, self.process, 30)):
            self.stop()
            raise SystemExit("FAIL the collector did not start (see %s)" % self.log.name)

    def spans(self):
        """Every span received so far, with its resource attributes, as dicts."""
        found = []
        if not os.path.exists(self.spans_file):
            return found
        with open(self.spans_file) as f:
            for number, line in enumerate(f):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                except ValueError:
                    continue  # a line being written
                batch = []
                for resource_spans in data.get("resourceSpans", []):
                    resource = attributes(resource_spans.get("resource", {}))
                    for scope_spans in resource_spans.get("scopeSpans", []):
                        for span in scope_spans.get("spans", []):
                            span["resource"] = resource
                            span["attrs"] = attributes(span)
                            span["export"] = number  # one line per export request
                            batch.append(span)
                # Spans that went out with the application's span were sent at its end.
                at_end = any(s["name"] == "spark.application" for s in batch)
                for span in batch:
                    span["at_end"] = at_end
                found.extend(batch)
        return found

    def wait_for_spans(self, predicate, timeout_s=20):
        deadline = time.time() + timeout_s
        while True:
            spans = self.spans()
            if predicate(spans) or time.time() > deadline:
                return spans
            time.sleep(0.3)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()


def attributes(holder):
    values = {}
    for attribute in holder.get("attributes", []):
        value = attribute.get("value", {})
        if "stringValue" in value:
            values[attribute["key"]] = value["stringValue"]
        elif "intValue" in value:
            values[attribute["key"]] = int(value["intValue"])
        elif "doubleValue" in value:
            values[attribute["key"]] = float(value["doubleValue"])
        elif "boolValue" in value:
            values[attribute["key"]] = value["boolValue"]
        elif "arrayValue" in value:
            values[attribute["key"]] = [next(iter(v.values()), None)
                                        for v in value["arrayValue"].get("values", [])]
    return values


def duration_ms(span):
    return (int(span["endTimeUnixNano"]) - int(span["startTimeUnixNano"])) / 1e6


def start_ms(span):
    return int(span["startTimeUnixNano"]) / 1e6


def spark_env(spark_home):
    env = dict(os.environ, SPARK_HOME=os.path.realpath(spark_home), SPARK_LOCAL_IP="127.0.0.1")
    env.pop("SPARK_CONF_DIR", None)
    for key in list(env):
        if key.startswith("OTEL_") or key == "TRACEPARENT":
            del env[key]
    # scripts/install-spark.sh: <venv>/lib/pythonX.Y/site-packages/pyspark is the Spark home.
    venv = os.path.realpath(spark_home)
    for _ in range(4):
        venv = os.path.dirname(venv)
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        python = sys.executable
    env["PYSPARK_PYTHON"] = python
    return env, python


def submit_command(options, work, extra_conf):
    command = [os.path.join(options.spark_home, "bin", "spark-submit"),
               "--master", "local[2]", "--driver-memory", "1g",
               "--conf", "spark.ui.enabled=false",
               "--conf", "spark.plugins=io.sparkprof.SparkProfPlugin",
               "--conf", "spark.sparkprof.outputDir=" + os.path.join(work, "sparkprof"),
               "--conf", "spark.sparkprof.prometheus.port=-1",
               "--conf", "spark.sparkprof.finalBatchTimeout=2s",
               "--jars", options.plugin_jar]
    for key, value in extra_conf.items():
        command += ["--conf", "%s=%s" % (key, value)]
    return command


def new_traceparent():
    trace_id = secrets.token_hex(16)
    span_id = secrets.token_hex(8)
    return trace_id, span_id, "00-%s-%s-01" % (trace_id, span_id)


def the_report(work):
    reports = glob.glob(os.path.join(work, "sparkprof", "*", "report.json"))
    if not check(len(reports) == 1, "one report.json in %s, found %d" % (work, len(reports))):
        return None
    with open(reports[0]) as f:
        return json.load(f)


def run_application(options, work, collector, protocol):
    trace_id, caller_span_id, traceparent = new_traceparent()
    env, _ = spark_env(options.spark_home)
    env["TRACEPARENT"] = traceparent
    # A standard variable the Spark keys do not set must still apply.
    env["OTEL_RESOURCE_ATTRIBUTES"] = "deployment.environment=otel-test"
    port = collector.grpc_port if protocol == "grpc" else collector.http_port
    if protocol == "unreachable":
        port = free_port()  # nothing listens there
    conf = {
        "spark.sparkprof.otel.enabled": "true",
        "spark.sparkprof.otel.endpoint": "http://127.0.0.1:%d" % port,
        "spark.sparkprof.otel.protocol": "http" if protocol == "http" else "grpc",
        "spark.sparkprof.otel.serviceName": "otel-test-" + protocol,
        "spark.sparkprof.otel.samplingRatio": "1.0",
        "spark.sparkprof.otel.exportTimeout": "5s",
        "spark.sparkprof.otel.jobSpansInterval": "1s",
    }
    command = submit_command(options, work, conf)
    command += [os.path.join(HERE, "otel_app.py"), os.path.join(work, "output")]
    print("+ " + " ".join(command), flush=True)
    started = time.time()
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240,
                            check=False)
    with open(os.path.join(work, "driver.log"), "w") as f:
        f.write(result.stdout + result.stderr)
    print("application: exit %d after %.0f s" % (result.returncode, time.time() - started))
    check(result.returncode == 0, "the application exited %d (driver.log in %s)"
          % (result.returncode, work))
    otel_lines = [line for line in (result.stdout + result.stderr).splitlines()
                  if "sparkprof" in line and "OpenTelemetry:" in line]
    for line in otel_lines:
        print("driver: " + line.strip())
    check(len(otel_lines) == 1, "one OpenTelemetry line in the driver log, found %d"
          % len(otel_lines))
    report = the_report(work)
    if protocol == "unreachable":
        check(otel_lines and "not exported" in otel_lines[0],
              "the driver says the spans were not exported")
        return
    check(otel_lines and " exported (OTLP " in otel_lines[0] and " not " not in otel_lines[0],
          "the driver says it exported")
    check(otel_lines and " as their jobs ended)" in otel_lines[0],
          "job spans went out as the jobs ended, before the application's end")
    if report is None:
        return
    expected = 1 + sum(1 for p in PHASES if report["phases"][p]["ms"] > 0) \
        + sum(1 for j in report["jobs"] if j["submission_ms"] >= 0) \
        + sum(1 for s in report["stages"] if s["submission_ms"] >= 0)
    spans = collector.wait_for_spans(
        lambda found: len([s for s in found if s["traceId"] == trace_id]) >= expected)
    check_application_trace(spans, report, trace_id, caller_span_id, protocol)


PHASES = ["resource_wait", "driver_only", "compute", "task_wait", "shuffle", "gc", "io_write",
          "idle_slots"]


def check_application_trace(spans, report, trace_id, caller_span_id, protocol):
    ours = [s for s in spans if s["traceId"] == trace_id]
    check(len(ours) == len(spans), "every received span is in trace %s (%d of %d)"
          % (trace_id, len(ours), len(spans)))
    by_id = {s["spanId"]: s for s in ours}
    applications = [s for s in ours if s["name"] == "spark.application"]
    if not check(len(applications) == 1, "one application span, found %d" % len(applications)):
        return
    application = applications[0]
    app = report["application"]
    check(application.get("parentSpanId") == caller_span_id,
          "the application span's parent is the TRACEPARENT span")
    check(application["attrs"].get("spark.app.id") == app["id"], "spark.app.id attribute")
    check(application["resource"].get("service.name") == "otel-test-" + protocol,
          "service.name from spark.sparkprof.otel.serviceName")
    check(application["resource"].get("deployment.environment") == "otel-test",
          "OTEL_RESOURCE_ATTRIBUTES applies")
    check(abs(start_ms(application) - app["start_ms"]) < 1
          and abs(duration_ms(application) - app["duration_ms"]) < 1,
          "the application span runs from the application's start to its end")

    phases = [s for s in ours if s["name"].startswith("spark.phase.")]
    check(all(p.get("parentSpanId") == application["spanId"] for p in phases),
          "phase spans are children of the application span")
    # A phase without time has a span only when jobs exported as they ended sit under it.
    parents = {s.get("parentSpanId") for s in ours if s["name"] == "spark.job"}
    want_phases = [p for p in PHASES if report["phases"][p]["ms"] > 0
                   or any(s["name"] == "spark.phase." + p and s["spanId"] in parents
                          for s in phases)]
    got_phases = [p["name"][len("spark.phase."):] for p in sorted(phases, key=start_ms)]
    check(got_phases == want_phases, "phase spans %s, want %s" % (got_phases, want_phases))
    total = sum(duration_ms(p) for p in phases)
    check(abs(total - duration_ms(application)) < 1,
          "phase spans add up to the application span: %.0f ms vs %.0f ms"
          % (total, duration_ms(application)))
    for phase in phases:
        name = phase["name"][len("spark.phase."):]
        check(abs(duration_ms(phase) - report["phases"][name]["ms"]) < 1,
              "phase %s lasts the report's %d ms" % (name, report["phases"][name]["ms"]))
    phase_ids = {p["spanId"] for p in phases}

    jobs = {s["attrs"].get("spark.job.id"): s for s in ours if s["name"] == "spark.job"}
    check(len(jobs) == len(report["jobs"]), "%d job spans, the report has %d jobs"
          % (len(jobs), len(report["jobs"])))
    failed = 0
    for job in report["jobs"]:
        span = jobs.get(job["job_id"])
        if not check(span is not None, "job %d has a span" % job["job_id"]):
            continue
        check(span.get("parentSpanId") in phase_ids, "job %d is under a phase" % job["job_id"])
        check(abs(duration_ms(span) - job["duration_ms"]) < 1,
              "job %d lasts %d ms" % (job["job_id"], job["duration_ms"]))
        check(span["attrs"].get("spark.job.description") == job["description"],
              "job %d description" % job["job_id"])
        if job["result"] == "failed":
            failed += 1
            check(span.get("status", {}).get("code") in ("STATUS_CODE_ERROR", 2),
                  "failed job %d has an error status" % job["job_id"])
            check(span["attrs"].get("spark.failure_reason") == job["failure_reason"],
                  "failed job %d carries its failure reason" % job["job_id"])
    check(failed >= 1, "the application's failing job is in the report")

    stages = [s for s in ours if s["name"] == "spark.stage"]
    ran = [s for s in report["stages"] if s["submission_ms"] >= 0]
    check(len(stages) == len(ran), "%d stage spans, %d stage attempts ran"
          % (len(stages), len(ran)))
    job_span_ids = {s["spanId"] for s in jobs.values()}
    by_stage = {(s["attrs"].get("spark.stage.id"), s["attrs"].get("spark.stage.attempt")): s
                for s in stages}
    profiled_spans = 0
    end_stage_spans_with_profile = 0
    for stage in ran:
        span = by_stage.get((stage["stage_id"], stage["attempt"]))
        if not check(span is not None, "stage %d.%d has a span"
                     % (stage["stage_id"], stage["attempt"])):
            continue
        check(span.get("parentSpanId") in job_span_ids,
              "stage %d is under a job" % stage["stage_id"])
        check(abs(duration_ms(span) - stage["duration_ms"]) < 1,
              "stage %d lasts %d ms" % (stage["stage_id"], stage["duration_ms"]))
        check(span["attrs"].get("spark.stage.num_tasks") == stage["num_tasks"],
              "stage %d task count" % stage["stage_id"])
        check(span["attrs"].get("spark.shuffle_write_bytes")
              == stage["totals"]["shuffle_write_bytes"],
              "stage %d shuffle bytes" % stage["stage_id"])
        # The agent sampled it: where its task time went. Stages sent while the application
        # runs go before the profile is read, at its end, and carry none; which stages those
        # are depends on the host's speed (the export runs every second).
        has_profile = "sparkprof.profile.sampled_task_ms" in span["attrs"]
        if "profile" in stage and span.get("at_end"):
            end_stage_spans_with_profile += 1
            check(has_profile, "stage %d, sent at the application's end, carries its profile"
                  % stage["stage_id"])
        if "profile" in stage and has_profile:
            profiled_spans += 1
            profile = stage["profile"]
            check(abs(span["attrs"]["sparkprof.profile.sampled_task_ms"]
                      - profile["sampled_task_ms"]) < 0.01
                  and all(abs(span["attrs"].get("sparkprof.profile.%s_ms" % name, -1) - ms) < 0.01
                          for name, ms in profile["categories_ms"].items()),
                  "stage %d carries its profile (sampled, on/off CPU, per category)"
                  % stage["stage_id"])
        parent_job = by_id.get(span.get("parentSpanId"))
        if parent_job:
            check(start_ms(span) >= start_ms(parent_job) - 1,
                  "stage %d starts within its job" % stage["stage_id"])
    if report.get("profile", {}).get("available") and end_stage_spans_with_profile:
        check(profiled_spans > 0, "stage spans carry the agent's profile")
    print("%d stage spans sent at the application's end (of %d), %d of them with a profile"
          % (sum(1 for s in stages if s.get("at_end")), len(stages), profiled_spans))
    print("trace %s: %d spans (%d phases, %d jobs, %d stages), phases %s"
          % (trace_id, len(ours), len(phases), len(jobs), len(stages),
             {p: report["phases"][p]["ms"] for p in want_phases}))


CONNECT_CLIENT = r"""
import os
import sys
from pyspark.sql import SparkSession
# Each session's requests carry its caller's traceparent (a connection-string parameter is sent
# as gRPC metadata with every request), as an OpenTelemetry-instrumented caller would.
first = SparkSession.builder.remote(sys.argv[1] + "/;traceparent=" + sys.argv[2]).create()
rows = first.range(0, 100000, numPartitions=4).selectExpr("id % 5 AS k").groupBy("k").count()
assert len(rows.collect()) == 5
second = SparkSession.builder.remote(sys.argv[1] + "/;traceparent=" + sys.argv[3]).create()
assert second.range(0, 1000, numPartitions=2).selectExpr("sum(id)").collect()[0][0] == 499500
first.stop()
second.stop()
print("client: two requests done", flush=True)
# Both sessions are stopped; the client library's own pool threads must not hold the test up.
os._exit(0)
"""


def run_connect(options, work, collector):
    env, python = spark_env(options.spark_home)
    imports = "import pyspark.sql.connect.session, pandas, pyarrow, grpc, grpc_status, zstandard"
    probe = subprocess.run([python, "-c", imports], env=env, capture_output=True, check=False)
    if probe.returncode != 0:
        print("skipped: the Spark Connect client libraries are not installed "
              "(scripts/install-spark.sh): " + probe.stderr.decode()[-300:])
        return SKIPPED
    app_trace_id, app_span_id, app_traceparent = new_traceparent()
    env["TRACEPARENT"] = app_traceparent
    port = free_port()
    conf = {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.connect.grpc.interceptor.classes":
            "io.sparkprof.connect.TraceparentInterceptor",
        "spark.sparkprof.otel.enabled": "true",
        "spark.sparkprof.otel.endpoint": "http://127.0.0.1:%d" % collector.grpc_port,
        "spark.sparkprof.otel.protocol": "grpc",
        "spark.sparkprof.otel.serviceName": "spark-connect",
        "spark.sparkprof.otel.jobSpansInterval": "1s",
    }
    command = submit_command(options, work, conf)
    command += ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
                "--name", "sparkprof connect test", "spark-internal"]
    print("+ " + " ".join(command), flush=True)
    log = open(os.path.join(work, "connect-server.log"), "w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        if not check(wait_for_port(port, server, 120), "the Connect server listens"):
            return 1
        first = new_traceparent()
        second = new_traceparent()
        client_env = dict(env)
        client_env.pop("TRACEPARENT", None)
        client = subprocess.run([python, "-c", CONNECT_CLIENT, "sc://127.0.0.1:%d" % port,
                                 first[2], second[2]], env=client_env, capture_output=True,
                                text=True, timeout=180, check=False)
        print(client.stdout + client.stderr[-2000:])
        check(client.returncode == 0, "the Connect client ran its two requests")
        # A Connect server runs for days: each request's jobs must reach the collector while it
        # serves, not when it stops.
        live = collector.wait_for_spans(
            lambda found: all(any(s["name"] == "spark.job" and s["traceId"] == request[0]
                                  for s in found) for request in (first, second)),
            timeout_s=30)
        check(all(any(s["name"] == "spark.job" and s["traceId"] == request[0] for s in live)
                  for request in (first, second))
              and server.poll() is None
              and not any(s["name"] == "spark.application" for s in live),
              "both requests' job spans arrived while the server still ran")
    finally:
        # The server's SparkContext stops on SIGTERM (shutdown hook): the plugin exports then.
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            check(False, "the Connect server stopped within 90 s")
        log.close()
    with open(log.name) as f:
        otel_lines = [line.strip() for line in f if "OpenTelemetry:" in line]
    for line in otel_lines:
        print("server: " + line)
    check(len(otel_lines) == 1 and " exported (" in otel_lines[0],
          "the server exported its spans in one line")
    report = the_report(work)
    spans = collector.wait_for_spans(
        lambda found: any(s["traceId"] == second[0] for s in found)
        and any(s["name"] == "spark.application" for s in found))
    applications = [s for s in spans if s["name"] == "spark.application"]
    if not check(len(applications) == 1, "one application span"):
        return 1
    application = applications[0]
    check(application["traceId"] == app_trace_id
          and application.get("parentSpanId") == app_span_id,
          "the server's application span is under its TRACEPARENT")
    job_ids = [s["attrs"].get("spark.job.id") for s in spans if s["name"] == "spark.job"]
    check(len(job_ids) == len(set(job_ids)), "each job has one span: %s" % sorted(job_ids))
    for trace_id, span_id, _ in (first, second):
        jobs = [s for s in spans if s["name"] == "spark.job" and s["traceId"] == trace_id]
        if not check(jobs, "the request with trace %s has job spans in that trace" % trace_id):
            continue
        check(all(j.get("parentSpanId") == span_id for j in jobs),
              "its jobs are children of the caller's span %s" % span_id)
        check(all(any(link.get("spanId") == application["spanId"]
                      for link in j.get("links", [])) for j in jobs),
              "its jobs link to the application span")
        stages = [s for s in spans if s["name"] == "spark.stage" and s["traceId"] == trace_id]
        check(stages and all(s.get("parentSpanId") in {j["spanId"] for j in jobs}
                             for s in stages),
              "its stages are under its jobs")
        print("request trace %s: %d jobs, %d stages" % (trace_id, len(jobs), len(stages)))
    if report is not None:
        check(len([s for s in spans if s["name"] == "spark.job"]) == len(report["jobs"]),
              "every job of the server's report is a span")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--plugin-jar", required=True)
    parser.add_argument("--collector", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("mode", choices=["grpc", "http", "unreachable", "connect"])
    options = parser.parse_args()
    if not os.access(os.path.join(options.spark_home, "bin", "spark-submit"), os.X_OK):
        print("skipped: no Spark at %s (scripts/install-spark.sh)" % options.spark_home)
        return SKIPPED
    if not os.access(options.collector, os.X_OK):
        print("skipped: no collector at %s (scripts/install-otelcol.sh)" % options.collector)
        return SKIPPED
    shutil.rmtree(options.work, ignore_errors=True)
    os.makedirs(options.work)
    collector = Collector(options.collector, options.work)
    try:
        if options.mode == "connect":
            if run_connect(options, options.work, collector) == SKIPPED:
                return SKIPPED
        else:
            run_application(options, options.work, collector, options.mode)
    finally:
        collector.stop()
    if problems:
        print("FAIL: %d problems" % len(problems))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
