"""Real servers on loopback for the collector and store tests: a Spark History Server from the
pinned pyspark distribution, a PostgreSQL server from Debian's package, an S3 endpoint (moto's
server mode), GCS (fake-gcs-server) and Azure Blob Storage (Azurite) emulators, a real HDFS
(MiniDFSCluster) with WebHDFS. Each fixture
skips its tests when the server cannot be started here."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]

# Small real logs the History Server serves (paths under ../shared/eventlogs).
HISTORY_SERVER_LOGS = [
    "apache+spark/core/src/test/resources/spark-events/app-20161115172038-0000",
    "apache+spark/core/src/test/resources/spark-events/local-1422981759269",
    "apache+spark/core/src/test/resources/spark-events/application_1516285256255_0012",
    "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-profiling/eventlog_dsv1.zstd",
    "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification/"
    "eventlog_v2_local-1623876083964",
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def copy_logs(shared: Path, names: list[str], into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    for name in names:
        source = shared / name
        if source.is_dir():
            shutil.copytree(source, into / source.name)
        else:
            shutil.copyfile(source, into / source.name)


class HistoryServer:
    def __init__(self, url: str, log_dir: Path, app_ids: list[str]) -> None:
        self.url = url
        self.log_dir = log_dir
        self.app_ids = app_ids


@pytest.fixture(scope="session")
def history_server(shared_eventlogs: Path) -> Iterator[HistoryServer]:
    version = os.environ.get("SPARKPROF_HISTORY_SERVER_SPARK", "3.5.9")
    spark_home = REPO / "build" / "spark" / version / "home"
    if not (spark_home / "bin" / "spark-class").exists():
        pytest.skip(f"no Spark {version} in {spark_home} (scripts/install-spark.sh)")
    if shutil.which("java") is None:
        pytest.skip("no java on PATH")
    work = Path(tempfile.mkdtemp(prefix="sparkprof-history-server-"))
    logs = work / "logs"
    copy_logs(shared_eventlogs, HISTORY_SERVER_LOGS, logs)
    port = free_port()
    (work / "history.conf").write_text(
        f"spark.history.fs.logDirectory file:{logs}\n"
        f"spark.history.ui.port {port}\n"
        "spark.history.fs.update.interval 1s\n"
        f"spark.history.store.path {work / 'store'}\n"
    )
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home),
        "SPARK_DAEMON_MEMORY": "512m",
        "SPARK_NO_DAEMONIZE": "1",
    }
    server = subprocess.Popen(
        [
            str(spark_home / "bin" / "spark-class"),
            "org.apache.spark.deploy.history.HistoryServer",
            "--properties-file",
            str(work / "history.conf"),
        ],
        env=env,
        stdout=open(work / "server.log", "wb"),  # noqa: SIM115 (closed with the process)
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        app_ids = _wait_for_applications(url, len(HISTORY_SERVER_LOGS), server, work)
        yield HistoryServer(url, logs, app_ids)
    finally:
        _stop(server, work, 30)


def _stop(server: subprocess.Popen[bytes], work: Path, timeout_s: float) -> None:
    """Ends a server started in its own session (and its children), then removes its folder."""
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    shutil.rmtree(work, ignore_errors=True)


def _wait_for_applications(
    url: str, count: int, server: subprocess.Popen[bytes], work: Path
) -> list[str]:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("History Server exited:\n" + (work / "server.log").read_text())
        try:
            apps = requests.get(f"{url}/api/v1/applications", timeout=5).json()
            if len(apps) >= count:
                return [app["id"] for app in apps]
        except (requests.RequestException, ValueError):
            pass
        time.sleep(0.5)
    raise RuntimeError(
        "History Server did not list the logs:\n" + (work / "server.log").read_text()
    )


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """An S3 API (moto's server mode) on loopback."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def _serve(command: list[str], port: int, work: Path, name: str) -> Iterator[str]:
    """Runs an emulator until the fixture ends; yields its URL once its port answers."""
    log = work / f"{name}.log"
    server = subprocess.Popen(
        command,
        cwd=work,
        stdout=open(log, "wb"),  # noqa: SIM115 (closed with the process)
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"{name} exited:\n" + log.read_text())
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not listen:\n" + log.read_text()) from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(server, work, 15)


def _emulator(name: str) -> Path:
    binary = REPO / "build" / "tools" / name
    if not binary.exists():
        pytest.skip(f"no {binary} (scripts/install-storage-emulators.sh)")
    return binary


@pytest.fixture(scope="session")
def fake_gcs_endpoint() -> Iterator[str]:
    """Google Cloud Storage's JSON API (fake-gcs-server, in memory) on loopback."""
    binary = _emulator("fake-gcs-server")
    port = free_port()
    work = Path(tempfile.mkdtemp(prefix="sparkprof-gcs-"))
    command = [
        str(binary),
        "-backend=memory",
        "-scheme=http",
        "-host=127.0.0.1",
        f"-port={port}",
        f"-public-host=127.0.0.1:{port}",
        "-log-level=error",
    ]
    yield from _serve(command, port, work, "fake-gcs-server")


@pytest.fixture(scope="session")
def azurite_endpoint() -> Iterator[str]:
    """Azure Blob Storage (Azurite, in memory) on loopback; the account is Azurite's
    devstoreaccount1."""
    binary = _emulator("azurite")
    if shutil.which("node") is None:
        pytest.skip("no node on PATH")
    port = free_port()
    work = Path(tempfile.mkdtemp(prefix="sparkprof-azurite-"))
    command = [
        str(binary),
        "--blobHost=127.0.0.1",
        f"--blobPort={port}",
        "--inMemoryPersistence",
        "--skipApiVersionCheck",
        "--loose",
        "--silent",
    ]
    yield from _serve(command, port, work, "azurite")


@pytest.fixture(scope="session")
def webhdfs_endpoint() -> Iterator[str]:
    """A real HDFS (MiniDFSCluster from Maven Central's hadoop-minicluster, one DataNode) on
    loopback; yields its WebHDFS address ``host:port``. The tiny main (minidfs/) is compiled with
    the machine's javac; Maven resolves the pinned classpath (cached in ~/.m2)."""
    if shutil.which("javac") is None or shutil.which("mvn") is None:
        pytest.skip("no javac or mvn on PATH (scripts/install-deps.sh)")
    source = Path(__file__).resolve().parent / "minidfs"
    work = Path(tempfile.mkdtemp(prefix="sparkprof-minidfs-"))
    classpath_file = work / "classpath.txt"
    subprocess.run(
        [
            "mvn",
            "-q",
            "-B",
            "-f",
            str(source / "pom.xml"),
            "dependency:build-classpath",
            f"-Dmdep.outputFile={classpath_file}",
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    classpath = classpath_file.read_text().strip()
    subprocess.run(
        ["javac", "-cp", classpath, "-d", str(work / "classes"), str(source / "MiniDfs.java")],
        check=True,
        capture_output=True,
    )
    port = free_port()
    log = work / "minidfs.log"
    server = subprocess.Popen(
        # Jersey (WebHDFS) defines classes reflectively: JDK 17 must open java.lang to it.
        [
            "java",
            "-Xmx512m",
            "--add-opens",
            "java.base/java.lang=ALL-UNNAMED",
            "-cp",
            f"{work / 'classes'}:{classpath}",
            "MiniDfs",
            str(work / "data"),
            str(port),
        ],
        stdin=subprocess.PIPE,
        stdout=open(log, "wb"),  # noqa: SIM115 (closed with the process; Hadoop logs here too)
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while b"\nREADY\n" not in b"\n" + log.read_bytes():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("MiniDFSCluster did not start:\n" + log.read_text()[-4000:])
            time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        _stop(server, work, 60)


def s3_options(endpoint: str) -> dict[str, Any]:
    return {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"},
    }


@pytest.fixture(scope="session")
def postgresql_server() -> Iterator[str]:
    """A private PostgreSQL server (Debian's binaries) in a temporary directory; yields the URL
    of its maintenance database. As root the server runs as `nobody` (PostgreSQL refuses root)."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not bins:
        pytest.skip("PostgreSQL is not installed (scripts/install-deps.sh --python)")
    bin_dir = Path(bins[-1]).parent
    as_user: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="sparkprof-pg-"))
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "nobody", "--"]
        folder.chmod(0o755)
        shutil.chown(folder, "nobody")
    data = folder / "data"
    port = free_port()

    def run(*command: str) -> None:
        subprocess.run([*as_user, *command], check=True, capture_output=True, cwd=folder)

    run(
        str(bin_dir / "initdb"),
        "-D",
        str(data),
        "-U",
        "sparkprof",
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-sync",
    )
    run(
        str(bin_dir / "pg_ctl"),
        "-D",
        str(data),
        "-l",
        str(folder / "server.log"),
        "-w",
        "-o",
        f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off",
        "start",
    )
    try:
        yield f"postgresql://sparkprof@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"],
            capture_output=True,
            cwd=folder,
        )
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture()
def postgresql_url(postgresql_server: str) -> str:
    """A fresh database on the test PostgreSQL server."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgresql_server, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    return postgresql_server.rsplit("/", 1)[0] + "/" + name


class Exporter:
    """A metrics endpoint Prometheus scrapes (text exposition format): ``text`` is served as it is
    at each scrape, so a test can move the counters between scrapes."""

    def __init__(self) -> None:
        import http.server
        import threading

        exporter = self
        self.text = ""

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = exporter.text.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Prometheus:
    def __init__(self, url: str, exporter: Exporter) -> None:
        self.url = url
        self.exporter = exporter


@pytest.fixture(scope="session")
def prometheus_server() -> Iterator[Prometheus]:
    """A real Prometheus (Debian's package) scraping an ``Exporter`` every second."""
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("Prometheus is not installed (scripts/install-deps.sh --python)")
    exporter = Exporter()
    folder = Path(tempfile.mkdtemp(prefix="sparkprof-prometheus-"))
    (folder / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n"
        "scrape_configs:\n  - job_name: spark\n"
        f"    static_configs:\n      - targets: ['{exporter.address}']\n"
    )
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={folder / 'prometheus.yml'}",
            f"--storage.tsdb.path={folder / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(url + "/-/ready", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.skip(f"Prometheus did not start (exit {process.poll()})")
            time.sleep(0.2)
        yield Prometheus(url, exporter)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        exporter.stop()
        shutil.rmtree(folder, ignore_errors=True)
