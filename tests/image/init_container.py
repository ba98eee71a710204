#!/usr/bin/env python3
"""Runs the sparkprof files image with podman as the Helm chart's init container: the container
`helm template` renders into the executor pod template (image, command, volume mount, security
context, memory limit), into an empty directory standing for its emptyDir volume. Then checks
that the directory holds exactly the image's /sparkprof files, byte for byte, written by a user
that is not root, and that the copy said nothing on stderr.

    init_container.py --archive build/image/sparkprof-files-0.1.0.oci.tar --dest DIR

Also a module: copy_files() is the step tests/image/run_image_spark.py runs before Spark.

How podman runs here (as root; docs/image.md says why): runtime runc, since crun 1.8 refuses a
host with cgroup v1 controllers beside a cgroup v2 hierarchy that has controllers ('cgroups in
hybrid mode not supported'); explicit --ulimit values, since podman asks for more open files than
this host's hard limit and runc may not raise a hard limit (setrlimit EPERM), and it lowers its
own process limit to 32768 before asking the runtime for the host's higher one; --network none
and --pull never (the image is the archive's, loaded into a private storage).

Exit codes: 0 passed, 1 a check failed, 77 skipped (no podman or helm).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
SKIPPED = 77
# podman sets its own RLIMIT_NPROC to this before it starts conmon (strace of podman 4.3.1).
PODMAN_NPROC_MAX = 32768


def find_helm(explicit: str) -> str:
    for candidate in (explicit, os.environ.get("HELM", ""), str(REPO / "build/tools/helm"),
                      shutil.which("helm") or ""):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return ""


def missing_prerequisite(helm: str, archive: Path) -> int | None:
    """None when podman, helm and the archive are there; else the exit code, after saying why."""
    if not shutil.which("podman") or not helm:
        print("SKIPPED: podman (scripts/install-deps.sh --image) or helm "
              "(scripts/install-helm.sh) is missing")
        return SKIPPED
    if not archive.exists():
        print(f"FAIL no image archive {archive} (scripts/build-image.sh)")
        return 1
    return None


def rendered_init_container(helm: str, set_values: list[str]) -> tuple[dict, list[dict]]:
    """The init container and the volumes of the executor pod template `helm template` renders."""
    command = [helm, "template", "t", str(REPO / "helm/sparkprof"), "--namespace", "spark-jobs"]
    for value in set_values:
        command += ["--set", value]
    rendered = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    for document in yaml.safe_load_all(rendered):
        if document and document["kind"] == "ConfigMap" and \
                "executor-pod-template.yaml" in document.get("data", {}):
            pod = yaml.safe_load(document["data"]["executor-pod-template.yaml"])
            containers = pod["spec"]["initContainers"]
            if len(containers) != 1:
                raise ValueError(f"expected one init container, the chart rendered {containers}")
            return containers[0], pod["spec"]["volumes"]
    raise ValueError("the chart rendered no executor pod template (installFromImage.enabled?)")


class Podman:
    """podman as root with its own storage below work_dir (nothing of the host's is touched)."""

    def __init__(self, work_dir: Path):
        self.work_dir = work_dir
        self.base = ["podman", "--root", str(work_dir / "storage"), "--runroot",
                     str(work_dir / "runroot"), "--runtime", "runc", "--cgroup-manager", "cgroupfs",
                     "--events-backend", "none"]

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(self.base + list(args), check=check, capture_output=True, text=True)

    def reset(self) -> None:
        # Not `podman system reset`: that also removes the host's podman networks.
        if (self.work_dir / "storage").exists():
            self.run("rmi", "--all", "--force", check=False)
        shutil.rmtree(self.work_dir, ignore_errors=True)


def limits() -> list[str]:
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    if nproc == resource.RLIM_INFINITY or nproc > PODMAN_NPROC_MAX:
        nproc = PODMAN_NPROC_MAX
    if nofile == resource.RLIM_INFINITY:
        nofile = 1 << 20
    return ["--ulimit", f"nofile={nofile}:{nofile}", "--ulimit", f"nproc={nproc}:{nproc}"]


def run_arguments(container: dict, volumes: list[dict], volume_dirs: dict[str, Path]) -> list[str]:
    """`podman run` arguments for a Kubernetes container: command is the entrypoint, args follow
    the image, the security context and the memory limit become their podman flags."""
    arguments = ["run", "--rm", "--pull", "never", "--network", "none", *limits()]
    security = container.get("securityContext", {})
    if security.get("readOnlyRootFilesystem"):
        arguments.append("--read-only")
    if security.get("allowPrivilegeEscalation") is False:
        arguments += ["--security-opt", "no-new-privileges"]
    for capability in security.get("capabilities", {}).get("drop", []):
        arguments += ["--cap-drop", capability.lower()]
    if "runAsUser" in security:
        group = security.get("runAsGroup", security["runAsUser"])
        arguments += ["--user", f"{security['runAsUser']}:{group}"]
    memory = container.get("resources", {}).get("limits", {}).get("memory")
    if memory:
        arguments += ["--memory", memory.replace("Mi", "m").replace("Gi", "g")]
    empty_dirs = {volume["name"] for volume in volumes if "emptyDir" in volume}
    for mount in container.get("volumeMounts", []):
        if mount["name"] not in empty_dirs:
            raise ValueError(f"volume {mount['name']} is not an emptyDir: {volumes}")
        arguments += ["--volume", f"{volume_dirs[mount['name']]}:{mount['mountPath']}"]
    arguments += ["--entrypoint", json.dumps(container["command"]), container["image"]]
    return arguments + container.get("args", [])


def image_user(podman: Podman, image: str) -> str:
    return podman.run("image", "inspect", "--format", "{{.Config.User}}", image).stdout.strip()


def image_files(archive: Path, source_dir: str) -> dict[str, str]:
    """sha256 of each file below source_dir in the archive's (single) layer."""
    files = {}
    with tarfile.open(archive) as outer:
        index = json.load(outer.extractfile("index.json"))
        manifest_digest = index["manifests"][0]["digest"].split(":")[1]
        manifest = json.load(outer.extractfile(f"blobs/sha256/{manifest_digest}"))
        for layer in manifest["layers"]:
            blob = outer.extractfile(f"blobs/sha256/{layer['digest'].split(':')[1]}")
            with tarfile.open(fileobj=blob, mode="r:*") as inner:
                for member in inner:
                    name = member.name.lstrip("./")
                    if member.isfile() and name.startswith(source_dir.strip("/") + "/"):
                        data = inner.extractfile(member).read()
                        files[name.split("/", 1)[1]] = hashlib.sha256(data).hexdigest()
    return files


def copy_files(archive: Path, helm: str, dest: Path, work_dir: Path,
               set_values: list[str] | None = None) -> list[str]:
    """Runs the chart's init container from the archive into dest (created empty, mode 0777 like
    an emptyDir). Returns the problems found (empty: the copy is right)."""
    container, volumes = rendered_init_container(helm, set_values or [])
    mount_paths = [mount["mountPath"] for mount in container["volumeMounts"]]
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    dest.chmod(0o777)
    podman = Podman(work_dir / "podman")
    podman.reset()
    problems = []
    try:
        loaded = podman.run("load", "--input", str(archive)).stdout
        if container["image"] not in loaded:
            problems.append(f"the archive loads as {loaded.strip()!r}, not as the chart's image "
                            f"{container['image']}")
            return problems
        user = image_user(podman, container["image"])
        if container.get("securityContext", {}).get("runAsNonRoot") and \
                (not user.split(":")[0].isdigit() or user.split(":")[0] == "0"):
            # The kubelet refuses such an image under runAsNonRoot (it cannot verify a name).
            problems.append(f"runAsNonRoot, but the image's user is {user!r}")
        arguments = run_arguments(container, volumes, {"sparkprof": dest})
        print("podman " + " ".join(arguments), flush=True)
        result = podman.run(*arguments, check=False)
        if result.returncode != 0 or result.stderr.strip():
            problems.append(f"the init container exited {result.returncode}; stderr: "
                            f"{result.stderr.strip()!r}")
        source_dir = container["command"][-1].split()[2].rsplit("/.", 1)[0]
        expected = image_files(archive, source_dir)
        copied = {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
                  for path in dest.iterdir() if path.is_file()}
        if not expected or copied != expected:
            problems.append(f"{dest} holds {sorted(copied)}, the image's {source_dir} "
                            f"{sorted(expected)} (or their bytes differ)")
        owners = {path.name: path.stat().st_uid for path in dest.iterdir()}
        if any(uid == 0 for uid in owners.values()):
            problems.append(f"root wrote the files (owners {owners}); the image's user is {user}")
        print(f"init container: {container['image']} as user {user} copied "
              f"{len(copied)} files into {dest} (mounted at {mount_paths})", flush=True)
    finally:
        podman.reset()
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path, required=True)
    parser.add_argument("--dest", type=Path, required=True)
    parser.add_argument("--helm", default="")
    args = parser.parse_args()
    helm = find_helm(args.helm)
    stop = missing_prerequisite(helm, args.archive)
    if stop is not None:
        return stop
    with tempfile.TemporaryDirectory(prefix="sparkprof-podman-") as work:
        problems = copy_files(args.archive.resolve(), helm, args.dest.resolve(), Path(work))
    for problem in problems:
        print("FAIL " + problem)
    print("init container: " + ("PASS" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
