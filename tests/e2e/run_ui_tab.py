#!/usr/bin/env python3
"""The sparkprof tab as a user sees it, in a real Spark (tests/browser/spark_ui_tab.test.js does
the looking, in headless Chromium):

1. a standalone cluster on loopback (tests/e2e/spark_cluster.py), a PySpark application with the
   plugin jar alone (--jars, spark.plugins: the jar starts the agents), Spark's UI behind a small
   reverse proxy at /proxy/<name>/ with spark.ui.proxyBase set, as YARN's and Kubernetes'
   proxies serve it, and Spark 4.2's Content-Security-Policy on: the live tab is loaded through
   the proxy while heavy stages run;
2. the application (no spark.sparkprof.outputDir: the default local working copy, and the
   outputs stored beside the event log, <spark.eventLog.dir>/<appId>.sparkprof/) stops; the
   stored folder holds the reports, the flame graphs and the zstd-compressed profile, which
   `sparkprof analyze LOG --profile EVENTLOGDIR` reads; the driver's local working copy is moved
   away, so a History Server (Spark's own class, the plugin jar on its classpath through
   SPARK_DAEMON_CLASSPATH, no spark.sparkprof.history.outputDir) over the event-log directory
   shows the tab with the end's report and the stage flame graphs from beside the log alone,
   lists no other application for the folder and logs no error about it; a copy of the event
   log under another application id, which has no sparkprof outputs, shows the analysis of its
   event log alone (the findings `sparkprof analyze` finds in it, phases, stages, no flame
   graph), says plainly that no profile was stored and how to get one, and keeps the analysis
   for the next view; a third copy, larger than spark.sparkprof.history.maxEventLogBytes, is
   not analysed and the tab says so.

Prints ok/FAIL lines and the pages' render times. Exit codes: 0 passed, 1 a check failed, 77
skipped (no Spark, java, node, Chromium or playwright-core).
"""

import argparse
import http.client
import http.server
import json
import os
import shutil
import socketserver
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_checks import check, failures  # noqa: E402
from spark_cluster import (SparkCluster, free_port, http_get, read_tail, wait_driver,  # noqa: E402
                           wait_for)

SKIPPED = 77
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BROWSER_TEST = os.path.join(REPO, "tests", "browser", "spark_ui_tab.test.js")
PROXY_NAME = "sparkapp"


class ReverseProxy:
    """/proxy/<name>/PATH -> http://127.0.0.1:<ui port>/PATH, like YARN's web proxy."""

    def __init__(self, name):
        self.prefix = f"/proxy/{name}"
        self.target_port = None
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                if not self.path.startswith(proxy.prefix + "/") or proxy.target_port is None:
                    self.send_error(404, "outside the proxied application")
                    return
                connection = http.client.HTTPConnection("127.0.0.1", proxy.target_port, timeout=60)
                try:
                    connection.request("GET", self.path[len(proxy.prefix):] or "/",
                                       headers={"Accept": self.headers.get("Accept", "*/*")})
                    response = connection.getresponse()
                    body = response.read()
                except OSError as error:
                    self.send_error(502, str(error))
                    return
                finally:
                    connection.close()
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() in ("transfer-encoding", "connection", "content-length"):
                        continue
                    if key.lower() == "location" and value.startswith("/"):
                        value = proxy.prefix + value
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{self.prefix}{path}"

    def stop(self):
        self.server.shutdown()


def copy_log_as(event_logs, app_id, other_id, pad_bytes=0):
    """The plain event log of app_id (a file, or Spark 4's rolling eventlog_v2_ directory) once
    more as other_id's: names and lines with the id replaced (checksum files left out); with
    pad_bytes, that many more bytes of an event no one knows (Spark's replay skips it) at the end
    of the last part. Returns the copy's bytes."""
    total = 0
    for name in os.listdir(event_logs):
        if app_id not in name or name.endswith(".sparkprof"):  # the log, not sparkprof's folder
            continue
        source = os.path.join(event_logs, name)
        target = os.path.join(event_logs, name.replace(app_id, other_id))
        parts = [(source, target)]
        if os.path.isdir(source):
            os.makedirs(target)
            parts = [(os.path.join(source, part),
                      os.path.join(target, part.replace(app_id, other_id)))
                     for part in os.listdir(source) if not part.endswith(".crc")]
        # Rolling parts are events_<index>_<id>: the padding goes into the last one.
        parts.sort(key=lambda pair: int(os.path.basename(pair[0]).split("_")[1])
                   if os.path.basename(pair[0]).startswith("events_") else -1)
        for i, (part_source, part_target) in enumerate(parts):
            with open(part_source, encoding="utf-8") as original, \
                    open(part_target, "w", encoding="utf-8") as copy:
                text = original.read().replace(app_id, other_id)
                # Lines of at most 1 MiB: Spark's own JSON reader refuses very long strings
                # (Jackson's 20 MB limit), and the History Server must load the application.
                for at in range(0, pad_bytes if i == len(parts) - 1 else 0, 1 << 20):
                    text += json.dumps({"Event": "org.example.sparkprof.Padding",
                                        "padding": "x" * min(1 << 20, pad_bytes - at)}) + "\n"
                copy.write(text)
            total += os.path.getsize(part_target)
    return total


def one_report(document):
    """The one application's report of a sparkprof.report/v1 document (either form)."""
    document = document or {}
    return (document.get("applications") or [document])[0]


def event_log_of(event_logs, app_id):
    """The path of app_id's event log (file or rolling directory) in event_logs."""
    names = [n for n in os.listdir(event_logs) if app_id in n and not n.endswith(".sparkprof")]
    return os.path.join(event_logs, names[0]) if names else None


def check_event_log_analysis(options, base, event_logs, other_id, big_id, big_bytes,
                             max_analysed, screenshots):
    """The History Server's tab of applications without a stored profile: other_id's event log
    analysed (the findings `sparkprof analyze` finds in it, the stages, no flame graph), kept for
    the next view; big_id's, past spark.sparkprof.history.maxEventLogBytes, not analysed, said."""
    started = time.monotonic()
    code, output = browser(options.node, f"{base}/history/{other_id}/sparkprof/", "no-profile",
                           os.path.join(screenshots, "no-profile.png"))
    check(code == 0, "History Server tab of an application without a profile: the event log's "
          "analysis (findings, phases, stages; no flame graphs), said plainly")
    print(f"event-log analysis page: {(time.monotonic() - started) * 1000:.0f} ms to the figures "
          f"drawn (first view: the History Server loads the application, the tab analyses its "
          f"log), {render_ms(output, 'reload_render_ms')} ms viewed again")
    url = f"{base}/history/{other_id}/sparkprof/data/"
    first = json.loads(http_get(url, 60)[1])
    started = time.monotonic()
    second = json.loads(http_get(url, 60)[1])
    second_ms = (time.monotonic() - started) * 1000
    report = one_report(first.get("report"))
    check(first.get("report_source") == "event_log" and not first.get("pending")
          and report.get("input", {}).get("layout") == "history-server"
          and first.get("profiled_stages") == [],
          f"data/: the report of the event log ({first.get('event_log')}, "
          f"{first.get('event_log_bytes')} bytes in {first.get('analysis_ms')} ms, "
          f"{first.get('event_log_message')}), no profiled stage")
    check(second.get("analysis_ms") == first.get("analysis_ms") and second.get("report") ==
          first.get("report"), f"a second view is the kept analysis ({second_ms:.0f} ms)")
    shown = shown_findings(output)
    if options.sparkprof:
        log = event_log_of(event_logs, other_id)
        result = subprocess.run([options.sparkprof, "analyze", log, "--format", "json"],
                                capture_output=True, text=True, timeout=300)
        offline = one_report(json.loads(result.stdout or "{}"))
        expected = [f["rule"] for f in offline.get("findings", [])]
        check(shown == expected and [f["rule"] for f in report.get("findings", [])] == expected,
              f"the tab shows the findings `sparkprof analyze` finds in the log ({shown} against "
              f"{expected})")
        check(len(report.get("stages", [])) == len(offline.get("stages", [])) > 0,
              f"the tab's report has the log's stages ({len(report.get('stages', []))} against "
              f"{len(offline.get('stages', []))})")
    big = json.loads(http_get(f"{base}/history/{big_id}/sparkprof/data/", 60)[1])
    message = big.get("event_log_message") or ""
    check(big.get("report") is None and str(big_bytes) in message
          and "spark.sparkprof.history.maxEventLogBytes" in message
          and "sparkprof analyze" in message,
          f"a log of {big_bytes} bytes, past the bound of {max_analysed}, is not analysed and the "
          f"tab says so ({message})")


def browser(node, url, mode, screenshot, prefix=None):
    """Runs the Chromium test; returns (exit code, its output)."""
    command = [node, BROWSER_TEST, url, mode, screenshot] + ([prefix] if prefix else [])
    result = subprocess.run(command, capture_output=True, text=True, timeout=240)
    output = result.stdout + result.stderr
    print(f"--- browser {mode}: {url}\n{output}", flush=True)
    return result.returncode, output


def shown_findings(output):
    """The rules of the findings the page drew, in order (the browser test's "findings:" line)."""
    for line in output.splitlines():
        if line.startswith("findings: "):
            text = line[len("findings: "):].strip()
            return [] if text == "(none)" else text.split(", ")
    return None


def render_ms(output, key="render_ms"):
    for line in output.splitlines():
        if line.startswith(key + "="):
            return int(line.split("=", 1)[1])
    return -1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--plugin-jar", required=True)
    parser.add_argument("--node", required=True)
    parser.add_argument("--sparkprof", help="the CLI: analyze --profile reads the stored folder")
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--tiny-stages", type=int, default=10)
    options = parser.parse_args()
    if not os.access(os.path.join(options.spark_home, "bin", "spark-submit"), os.X_OK):
        print(f"skipped: no Spark at {options.spark_home} (scripts/install-spark.sh)")
        return SKIPPED
    if not shutil.which("java") or not os.path.exists(options.node):
        print("skipped: java or node missing")
        return SKIPPED
    if not os.path.isdir(os.path.join(REPO, "tests", "browser", "node_modules", "playwright-core")):
        print("skipped: playwright-core is not installed (tests/browser/setup.sh)")
        return SKIPPED
    if not os.path.exists(os.environ.get("SPARKPROF_CHROMIUM", "/usr/bin/chromium")):
        print("skipped: no Chromium (scripts/install-deps.sh --browser)")
        return SKIPPED

    work = os.path.abspath(options.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    event_logs = os.path.join(work, "events")
    outputs = os.path.join(work, "sparkprof-out")
    screenshots = os.path.join(work, "screenshots")
    for directory in (event_logs, outputs, screenshots):
        os.makedirs(directory)
    stop_file = os.path.join(work, "stop")
    cluster = SparkCluster(options.spark_home, os.path.join(work, "cluster"))
    proxy = ReverseProxy(PROXY_NAME)
    ui_port = free_port()
    proxy.target_port = ui_port
    driver = None
    try:
        cluster.start_master()
        cluster.start_workers(1, 2, "1g")
        conf = {
            "spark.plugins": "io.sparkprof.SparkProfPlugin",
            "spark.jars": os.path.abspath(options.plugin_jar),  # what --jars sets
            # No spark.sparkprof.outputDir: the default local working copy, and the outputs
            # stored beside the event log (spark.sparkprof.besideEventLog=auto).
            "spark.sparkprof.prometheus.port": "0",
            "spark.sparkprof.flushInterval": "1s",
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": "file://" + event_logs,
            "spark.eventLog.compress": "false",
            "spark.ui.port": str(ui_port),
            "spark.ui.proxyBase": proxy.prefix,
            # Spark 4.2's Content-Security-Policy (script nonces); earlier releases ignore it.
            "spark.ui.contentSecurityPolicy.enabled": "true",
            "spark.executor.memory": "768m",
            "spark.executor.cores": "2",
        }
        driver_log = os.path.join(work, "driver.log")
        driver = cluster.submit_python(os.path.join(REPO, "tests", "e2e", "ui_tab_job.py"),
                                       options.python, [stop_file, options.tiny_stages], conf,
                                       log_path=driver_log)
        page_url = proxy.url("/sparkprof/")

        # The live tab once heavy stages run and some have samples (the data lists them).
        def heavy_with_samples():
            if driver.poll() is not None:
                raise RuntimeError("the driver exited early:\n" + read_tail(driver_log))
            try:
                status, body = http_get(proxy.url("/sparkprof/data/"), 30)
            except OSError:
                return None
            try:
                data = json.loads(body)
            except ValueError:
                print(f"data/ is not JSON yet (HTTP {status}): {body[:300]!r}", flush=True)
                return None
            report = data.get("report") or {}
            heavy = any("crc32" in (s.get("name") or "") or s.get("status") == "active"
                        for s in report.get("stages", []))
            return data if data.get("profiled_stages") and heavy and \
                len(report.get("stages", [])) > options.tiny_stages else None

        data = wait_for("the live tab's data with a heavy stage's samples", heavy_with_samples,
                        240 + options.tiny_stages * 0.5, 1.0)
        check(data["source"] == "live" and data["report"]["schema"] == "sparkprof.report/v1",
              "live data/: a sparkprof.report/v1 report of the run so far")
        # Spark's own servlet and security filter answered (attachHandler): their headers.
        with urllib.request.urlopen(proxy.url("/sparkprof/data/"), timeout=30) as response:
            headers = {k.lower(): v for k, v in response.getheaders()}
        check(headers.get("content-type", "").startswith("application/json")
              and headers.get("x-content-type-options") == "nosniff"
              and "x-frame-options" in headers and "no-store" in headers.get("cache-control", ""),
              f"data/ carries the headers of Spark's servlet and security filter ({headers})")
        release = tuple(int(part) for part in cluster.version.split(".")[:2])
        if release >= (4, 2):
            check("script-src 'self' 'nonce-" in headers.get("content-security-policy", ""),
                  "Spark 4.2's Content-Security-Policy applies to the tab (nonce scripts only)")
        time.sleep(2.5)  # past the driver's 2 s reuse of the last document: computed for this one
        started = time.monotonic()
        status, body = http_get(proxy.url("/sparkprof/data/"), 30)
        data_ms = (time.monotonic() - started) * 1000
        stages = len(json.loads(body)["report"]["stages"])
        print(f"live data/ of {stages} stage attempts: {data_ms:.0f} ms, {len(body)} bytes")
        code, output = browser(options.node, page_url, "live",
                               os.path.join(screenshots, "live.png"), proxy.url("/"))
        check(code == 0, "live tab in Chromium, through the proxy (spark.ui.proxyBase)")
        print(f"live page with {stages} stage attempts: {render_ms(output)} ms to the figures "
              f"drawn, {render_ms(output, 'reload_render_ms')} ms viewed again")
        # The flame graph of a stage attempt without samples is a 400 with the reason.
        try:
            status, _ = http_get(proxy.url("/sparkprof/flamegraph/?stage=99999&attempt=0"), 10)
        except OSError as error:
            status = getattr(error, "code", -1)
        check(status == 400, f"a stage without samples: HTTP 400 ({status})")

        with open(stop_file, "w"):
            pass
        code, _ = wait_driver(driver, 300)
        driver = None
        check(code == 0, f"the application finished (exit {code})")
        stored_dirs = [d for d in os.listdir(event_logs) if d.endswith(".sparkprof")]
        check(len(stored_dirs) == 1,
              f"one application folder beside the event log ({sorted(os.listdir(event_logs))})")
        app_id = stored_dirs[0][:-len(".sparkprof")]
        stored = os.path.join(event_logs, stored_dirs[0])
        stored_files = sorted(os.listdir(stored))
        print(f"beside the event log: {stored_files}, "
              f"{sum(os.path.getsize(os.path.join(stored, f)) for f in stored_files)} bytes")
        check({"report.json", "report.txt", "report.md", "report.html",
               "profile.sparkprof.zstd"} <= set(stored_files)
              and any(f.startswith("stage-") and f.endswith(".html") for f in stored_files)
              and not any(f.startswith(".") for f in stored_files),
              "the driver stored the reports, stage flame graphs and the compressed profile "
              "beside the event log, no temporary file left")
        # The local working copy (the driver's default outputDir) moves into the work dir: the
        # History Server below has only the folder beside the log.
        with open(driver_log, encoding="utf-8", errors="replace") as log:
            driver_text = log.read()
        check("outputs stored beside the event log in " in driver_text,
              "the driver logged where it stored the outputs")
        local_copy = None
        for line in driver_text.splitlines():
            if "report written: " in line:
                local_copy = os.path.dirname(line.split("report written: ", 1)[1].split()[0])
        check(local_copy is not None and os.path.isfile(os.path.join(local_copy, "report.json")),
              f"the local working copy has the report ({local_copy})")
        if local_copy is not None and os.path.isdir(local_copy):
            shutil.move(local_copy, os.path.join(outputs, os.path.basename(local_copy)))
        profile_zstd = os.path.join(stored, "profile.sparkprof.zstd")
        with open(profile_zstd, "rb") as f:
            check(f.read(4) == b"\x28\xb5\x2f\xfd", "the stored profile is a zstd frame")
        local_profile = os.path.join(outputs, app_id, "profile.sparkprof")
        if os.path.isfile(local_profile):
            print(f"profile: {os.path.getsize(local_profile)} bytes locally, "
                  f"{os.path.getsize(profile_zstd)} stored (zstd)")
        if options.sparkprof:
            logs = [n for n in os.listdir(event_logs)
                    if app_id in n and not n.endswith(".sparkprof")]
            report_path = os.path.join(work, "analyze-profile.json")
            result = subprocess.run(
                [options.sparkprof, "analyze", os.path.join(event_logs, logs[0]), "--profile",
                 event_logs, "--format", "json", "-o", report_path],
                capture_output=True, text=True, timeout=300)
            analyzed = {}
            if os.path.isfile(report_path):
                with open(report_path) as f:
                    analyzed = json.load(f)
            stage = sorted(int(f.split("-")[1]) for f in stored_files if f.startswith("stage-"))[-1]
            flame = subprocess.run(
                [options.sparkprof, "flamegraph", profile_zstd, "--stage", str(stage),
                 "--format", "collapsed", "-o", "-"], capture_output=True, text=True, timeout=120)
            check(flame.returncode == 0 and flame.stdout.strip(),
                  f"sparkprof flamegraph reads the stored profile.sparkprof.zstd: stage {stage}, "
                  f"{len(flame.stdout.splitlines())} stacks (exit {flame.returncode}) "
                  f"{flame.stderr.strip()[:300]}")
            check(result.returncode in (0, 1) and (analyzed.get("profile") or {}).get("available"),
                  "sparkprof analyze LOG --profile EVENTLOGDIR reads the stored profile (exit "
                  f"{result.returncode}, {(analyzed.get('profile') or {}).get('reason')}) "
                  f"{result.stderr.strip()[:300]}")

        # A second application in the History Server without sparkprof outputs: the same log
        # under another id.
        other_id = app_id[:-4] + "9999"
        other_bytes = copy_log_as(event_logs, app_id, other_id)
        # A third one, larger than the History Server's event-log analysis bound (set between
        # the two): the tab must say so, not analyse it.
        big_id = app_id[:-4] + "9998"
        big_bytes = copy_log_as(event_logs, app_id, big_id, pad_bytes=other_bytes + (2 << 20))
        max_analysed = other_bytes + (1 << 20)

        port = free_port()
        history_options = (f"-Dspark.history.fs.logDirectory=file://{event_logs} "
                           f"-Dspark.history.ui.port={port} -Dspark.history.fs.update.interval=1s "
                           f"-Dspark.sparkprof.history.maxEventLogBytes={max_analysed} "
                           "-Dspark.ui.contentSecurityPolicy.enabled=true")
        cluster._start("history-server", ["org.apache.spark.deploy.history.HistoryServer"],
                       {"SPARK_HISTORY_OPTS": history_options,
                        "SPARK_DAEMON_CLASSPATH": os.path.abspath(options.plugin_jar)})
        base = f"http://127.0.0.1:{port}"

        def listed():
            try:
                apps = json.loads(http_get(base + "/api/v1/applications", 3)[1])
            except (OSError, ValueError):
                return None
            ids = {a["id"] for a in apps}
            return ids if {app_id, other_id, big_id} <= ids else None

        ids = wait_for("the History Server lists the three applications", listed, 120, 0.5)
        check(ids == {app_id, other_id, big_id},
              f"the History Server lists the three applications only, none for the folder beside "
              f"the log ({sorted(ids)})")
        code, output = browser(options.node, f"{base}/history/{app_id}/sparkprof/", "history",
                               os.path.join(screenshots, "history.png"))
        check(code == 0, "History Server tab in Chromium: report, stages, flame graphs")
        # The page shows the end's report: its findings, in its order, whatever this run's are.
        with open(os.path.join(stored, "report.json")) as f:
            expected = [finding["rule"] for finding in json.load(f)["findings"]]
        shown = shown_findings(output)
        check(shown == expected,
              f"the History Server tab shows the end's report's findings ({shown} against {expected})")
        history_data = json.loads(http_get(f"{base}/history/{app_id}/sparkprof/data/", 30)[1])
        check(history_data.get("directory") == stored and history_data.get("report"),
              f"the History Server read them from beside the event log "
              f"({history_data.get('directory')}, searched {history_data.get('searched')})")
        history_log = "".join(read_tail(d.log_path, 10 ** 8) for d in cluster.daemons
                              if "history" in d.name)
        complaints = [line for line in history_log.splitlines()
                      if ".sparkprof" in line and ("ERROR" in line or "WARN" in line
                                                   or "Exception" in line)]
        check(history_log and not complaints,
              f"the History Server logged no error about the folder beside the log "
              f"{complaints[:3]}")
        print(f"history page: {render_ms(output)} ms to the figures drawn (the History Server "
              f"loading the application first), {render_ms(output, 'reload_render_ms')} ms viewed "
              "again")
        check_event_log_analysis(options, base, event_logs, other_id, big_id, big_bytes,
                                 max_analysed, screenshots)
    except Exception as error:  # noqa: BLE001 (report, then the logs)
        check(False, f"{type(error).__name__}: {error}")
    finally:
        if driver is not None and driver.poll() is None:
            with open(stop_file, "w"):
                pass
            try:
                wait_driver(driver, 60)
            except RuntimeError:
                pass
        if failures:
            print(cluster.log_tails())
            print(read_tail(os.path.join(work, "driver.log"), 6000))
        cluster.stop()
        proxy.stop()
    if failures:
        print(f"FAIL: {len(failures)} check(s) failed")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
