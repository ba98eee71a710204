"""A real YARN and HDFS on loopback (Hadoop's MiniYARNCluster and MiniDFSCluster), for the
Spark-on-YARN tests.

The tiny main in miniyarn/ is compiled with the machine's javac against the pinned classpath of
miniyarn/pom.xml (Maven Central's hadoop-client-minicluster, resolved by mvn into ~/.m2). The test
writes the cluster's yarn-site.xml (YarnSite: the NodeManager's fixed memory and vcores, its
physical-memory check on and its virtual-memory check off); MiniYarn starts one DataNode, one
ResourceManager and one NodeManager and writes the clients' configuration (the ports really bound)
into conf/, the HADOOP_CONF_DIR spark-submit reads. Everything sits below one work directory:
container logs in target/test/data/sparkprof/yarn-*/sparkprof-logDir-nm-0_0/<application>/
<container>/.
"""

import dataclasses
import glob
import json
import os
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from xml.sax.saxutils import escape

from spark_cluster import die_with_parent, read_tail

MINIYARN_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "miniyarn")


@dataclasses.dataclass
class YarnSite:
    """What the test sets in the cluster's yarn-site.xml."""
    node_memory_mb: int = 4096  # the NodeManager's whole resource: a few small containers
    node_vcores: int = 4
    pmem_check: bool = True     # kill a container whose process tree's RSS passes its size
    monitor_interval_ms: int = 1000  # how often the NodeManager measures the containers

    def properties(self):
        return {
            "yarn.nodemanager.resource.memory-mb": self.node_memory_mb,
            "yarn.nodemanager.resource.cpu-vcores": self.node_vcores,
            "yarn.scheduler.minimum-allocation-mb": 128,
            "yarn.scheduler.maximum-allocation-mb": self.node_memory_mb,
            "yarn.scheduler.maximum-allocation-vcores": self.node_vcores,
            "yarn.nodemanager.pmem-check-enabled": str(self.pmem_check).lower(),
            "yarn.nodemanager.vmem-check-enabled": "false",
            "yarn.nodemanager.container-monitor.interval-ms": self.monitor_interval_ms,
            # A MiniYARNCluster's NodeManager measures no container unless told to; and with
            # "strict" memory enforcement (cgroups' OOM killer, on by default) its polling
            # check never kills: this NodeManager has no cgroups, the polling check is the one.
            "yarn.minicluster.control-resource-monitoring": "true",
            "yarn.nodemanager.resource.memory.enforced": "false",
            # A full developer disk must not mark the only NodeManager unhealthy.
            "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": 99.5,
            # Container directories stay after the application for the checks (hs_err files).
            "yarn.nodemanager.delete.debug-delay-sec": 3600,
            # The CapacityScheduler's one queue; ApplicationMasters may take half of it (the
            # default 10% of 4 GiB is less than one ApplicationMaster).
            "yarn.scheduler.capacity.root.queues": "default",
            "yarn.scheduler.capacity.root.default.capacity": 100,
            "yarn.scheduler.capacity.maximum-am-resource-percent": 0.5,
        }

    def write(self, path):
        with open(path, "w") as f:
            f.write('<?xml version="1.0"?>\n<configuration>\n')
            for key, value in self.properties().items():
                f.write(f"  <property><name>{escape(key)}</name>"
                        f"<value>{escape(str(value))}</value></property>\n")
            f.write("</configuration>\n")


def missing_tools():
    """What this machine lacks to start the cluster ("" when nothing)."""
    for tool in ("java", "javac", "mvn"):
        if shutil.which(tool) is None:
            return f"no {tool} on PATH (scripts/install-deps.sh)"
    return ""


class MiniYarn:
    """One ResourceManager, one NodeManager and one DataNode, started by start()."""

    def __init__(self, work_dir, site=None, java_home=None):
        self.work_dir = os.path.abspath(work_dir)
        self.site = site or YarnSite()
        self.java_home = java_home or os.environ.get("JAVA_HOME", "")
        self.conf_dir = os.path.join(self.work_dir, "hadoop-conf")
        self.log_path = os.path.join(self.work_dir, "miniyarn.log")
        self.process = None
        self.default_fs = ""
        self.webhdfs = ""
        self.rm_web = ""

    def classpath(self):
        out = os.path.join(self.work_dir, "miniyarn-classpath.txt")
        subprocess.run(["mvn", "-q", "-B", "-Dstyle.color=never", "-f",
                        os.path.join(MINIYARN_SOURCE, "pom.xml"), "dependency:build-classpath",
                        f"-Dmdep.outputFile={out}"], check=True, capture_output=True, timeout=900)
        with open(out) as f:
            return f.read().strip()

    def start(self, timeout_s=240):
        os.makedirs(self.work_dir, exist_ok=True)
        classpath = self.classpath()
        classes = os.path.join(self.work_dir, "miniyarn-classes")
        subprocess.run(["javac", "-cp", classpath, "-d", classes,
                        os.path.join(MINIYARN_SOURCE, "MiniYarn.java")],
                       check=True, capture_output=True, timeout=300)
        site_path = os.path.join(self.work_dir, "yarn-site.xml")
        self.site.write(site_path)
        env = dict(os.environ)
        if self.java_home:
            env["JAVA_HOME"] = self.java_home
        elif "JAVA_HOME" not in env:  # containers start {{JAVA_HOME}}/bin/java
            java = os.path.realpath(shutil.which("java"))
            env["JAVA_HOME"] = os.path.dirname(os.path.dirname(java))
        java = os.path.join(env["JAVA_HOME"], "bin", "java")
        log4j = os.path.join(MINIYARN_SOURCE, "log4j.properties")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                # WebHDFS's Jersey defines classes reflectively: JDK 17 must open java.lang.
                [java, "-Xmx768m", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
                 f"-Dlog4j.configuration=file:{log4j}", "-cp", f"{classes}:{classpath}",
                 "MiniYarn", site_path, os.path.join(self.work_dir, "dfs"), self.conf_dir],
                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, env=env,
                cwd=self.work_dir, start_new_session=True, preexec_fn=die_with_parent)
        deadline = time.monotonic() + timeout_s
        while True:
            match = re.search(r"^READY (\S+) (\S+) (\S+)$", read_tail(self.log_path, 10_000_000),
                              re.M)
            if match:
                self.default_fs, self.webhdfs, self.rm_web = match.groups()
                return self
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("MiniYARNCluster did not start:\n" +
                                   read_tail(self.log_path, 4000))
            time.sleep(0.5)

    def stop(self):
        if self.process is None:
            return
        try:
            self.process.stdin.close()
            self.process.wait(60)
        except (OSError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.process.pid, 9)  # and any container left in its session
        except ProcessLookupError:
            pass
        self.process.wait()
        self.process = None

    # ---- what the cluster holds -------------------------------------------------------------

    def container_dirs(self, app_id):
        """The log directory of each container of app_id (stdout, stderr), by container id."""
        pattern = os.path.join(self.work_dir, "target", "**", "*logDir-nm*", app_id, "container_*")
        return sorted(glob.glob(pattern, recursive=True))

    def application_report(self, app_id):
        """The ResourceManager's REST view of an application (state, diagnostics)."""
        url = f"http://{self.rm_web}/ws/v1/cluster/apps/{app_id}"
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.loads(response.read())["app"]

    def hdfs_list(self, path):
        url = f"http://{self.webhdfs}/webhdfs/v1{urllib.parse.quote(path)}?op=LISTSTATUS"
        with urllib.request.urlopen(url, timeout=30) as response:
            return json.loads(response.read())["FileStatuses"]["FileStatus"]

    def hdfs_get(self, path, local_path):
        """Copies an HDFS file or directory to local_path over WebHDFS."""
        listing = self.hdfs_list(path)
        if len(listing) == 1 and listing[0]["pathSuffix"] == "" and listing[0]["type"] == "FILE":
            url = f"http://{self.webhdfs}/webhdfs/v1{urllib.parse.quote(path)}?op=OPEN"
            with urllib.request.urlopen(url, timeout=120) as response, \
                    open(local_path, "wb") as out:
                shutil.copyfileobj(response, out)
            return
        os.makedirs(local_path, exist_ok=True)
        for entry in listing:
            self.hdfs_get(path.rstrip("/") + "/" + entry["pathSuffix"],
                          os.path.join(local_path, entry["pathSuffix"]))
