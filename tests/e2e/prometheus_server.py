"""A real Prometheus on loopback for tests: generated config, temporary storage, HTTP API queries."""

import json
import os
import shutil
import subprocess
import urllib.parse

from spark_cluster import die_with_parent, free_port, http_get, read_tail, wait_for


class Prometheus:
    """Prometheus scraping one target every second, with its storage in work_dir."""

    def __init__(self, binary, work_dir):
        self.binary = binary
        self.work_dir = work_dir
        self.process = None
        self.url = None
        self.log_path = os.path.join(work_dir, "prometheus.log")

    def start(self, job, target):
        """Starts scraping target (host:port) as job; returns once Prometheus is ready."""
        config = os.path.join(self.work_dir, "prometheus.yml")
        with open(config, "w") as f:
            f.write(
                "global:\n"
                "  scrape_interval: 1s\n"
                "  scrape_timeout: 900ms\n"
                "  evaluation_interval: 1s\n"
                "scrape_configs:\n"
                f"  - job_name: {job}\n"
                "    static_configs:\n"
                f"      - targets: ['{target}']\n")
        # A port picked free can be taken before Prometheus binds it: try a few.
        last_error = None
        for _ in range(3):
            port = free_port()
            storage = os.path.join(self.work_dir, "prometheus-data")
            shutil.rmtree(storage, ignore_errors=True)
            with open(self.log_path, "w") as log:
                self.process = subprocess.Popen(
                    [self.binary, f"--config.file={config}", f"--storage.tsdb.path={storage}",
                     f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn",
                     "--storage.tsdb.retention.time=1h"],
                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    start_new_session=True, preexec_fn=die_with_parent)
            self.url = f"http://127.0.0.1:{port}"
            try:
                wait_for("Prometheus ready", self.ready, 60, 0.2, self.process)
                return
            except RuntimeError as e:
                last_error = e
                self.stop()
        raise RuntimeError(f"Prometheus did not start: {last_error}; log: {read_tail(self.log_path)}")

    def ready(self):
        try:
            return http_get(self.url + "/-/ready", 2)[0] == 200
        except OSError:
            return False

    def query(self, expression, at_s=None):
        """Instant query: a list of (labels, value)."""
        params = {"query": expression}
        if at_s is not None:
            params["time"] = f"{at_s:.3f}"
        _, body = http_get(self.url + "/api/v1/query?" + urllib.parse.urlencode(params), 10)
        answer = json.loads(body)
        if answer.get("status") != "success":
            raise RuntimeError(f"query {expression} failed: {body[:300]}")
        return [(r["metric"], float(r["value"][1])) for r in answer["data"]["result"]]

    def range_values(self, selector, at_s):
        """The (epoch seconds, value) samples of a range selector's single series."""
        params = {"query": selector, "time": f"{at_s:.3f}"}
        _, body = http_get(self.url + "/api/v1/query?" + urllib.parse.urlencode(params), 10)
        result = json.loads(body)["data"]["result"]
        return [(float(t), float(v)) for t, v in result[0]["values"]] if result else []

    def scalar(self, expression, at_s=None):
        """The single value of expression; None without a series; the list when there are several."""
        result = self.query(expression, at_s)
        return result[0][1] if len(result) == 1 else (None if not result else result)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None
