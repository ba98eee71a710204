#!/usr/bin/env python3
"""Builds the sparkprof files image with scripts/build-image.sh and checks it.

- Reproducible: a second build from the same inputs into another directory has the same manifest
  digest; a build with another SOURCE_DATE_EPOCH has a different one (so the comparison can fail).
- Named as the chart says: the archive's reference is helm/sparkprof/values.yaml's
  installFromImage.image repository:tag.
- Annotations: the sparkprof version (spark-plugin/pom.xml), the Spark versions
  (scripts/spark-versions.sh), the creation time (SOURCE_DATE_EPOCH).
- Config: user 65532:65532, linux/amd64, no entrypoint of its own.
- The layer: exactly the expected paths, owner 0:0, every time SOURCE_DATE_EPOCH; /bin/sh and
  /bin/cp link to a static busybox; /sparkprof holds the build's libraries (the jar's stripped
  copies) and the jar, byte for byte.
- The SBOM (SPDX 2.3 JSON, inside the image and beside the archive, the same bytes): valid for
  the SPDX project's validator (pyspdxtools, scripts/install-kubeconform.sh); every file of
  the layer with its sha256, busybox-static at its installed Debian version, sparkprof at the
  pom's version, Maven packages for the shaded artifacts.

The first build's archive stays in --out (build/image) for the tests that run it (ctest fixture
sparkprof_image). Exit codes: 0 passed, 1 a check failed, 77 skipped (umoci, skopeo,
busybox-static or pyspdxtools missing).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
from e2e_checks import check, failures  # noqa: E402

SKIPPED = 77
SBOM = "sbom/sparkprof-files.spdx.json"
PYSPDXTOOLS = REPO / "build" / "tools" / "spdx-venv" / "bin" / "pyspdxtools"


def build(build_dir: Path, out: Path, epoch: str | None = None) -> str:
    env = dict(os.environ)
    env.pop("SOURCE_DATE_EPOCH", None)
    if epoch is not None:
        env["SOURCE_DATE_EPOCH"] = epoch
    subprocess.run(["bash", str(REPO / "scripts/build-image.sh"), "--build-dir", str(build_dir),
                    "--out", str(out)], check=True, env=env)
    return next(out.glob("*.digest")).read_text().strip()


def pom_version() -> str:
    for line in (REPO / "spark-plugin/pom.xml").read_text().splitlines():
        if line.startswith("  <version>"):
            return line.split(">")[1].split("<")[0]
    raise ValueError("no version in spark-plugin/pom.xml")


class Archive:
    """The OCI archive's index, manifest, config and the files of its one layer."""

    def __init__(self, path: Path):
        with tarfile.open(path) as outer:
            def blob(digest: str) -> bytes:
                return outer.extractfile("blobs/sha256/" + digest.split(":")[1]).read()

            self.index = json.loads(outer.extractfile("index.json").read())
            descriptor = self.index["manifests"][0]
            self.manifest_bytes = blob(descriptor["digest"])
            self.manifest = json.loads(self.manifest_bytes)
            self.config = json.loads(blob(self.manifest["config"]["digest"]))
            layers = self.manifest["layers"]
            self.layer_count = len(layers)
            self.members: dict[str, tarfile.TarInfo] = {}
            self.data: dict[str, bytes] = {}
            with tarfile.open(fileobj=outer.extractfile(
                    "blobs/sha256/" + layers[0]["digest"].split(":")[1]), mode="r:*") as layer:
                for member in layer:
                    name = member.name.removeprefix("./")
                    self.members[name] = member
                    if member.isfile():
                        self.data[name] = layer.extractfile(member).read()
        self.ref_name = descriptor.get("annotations", {}).get("org.opencontainers.image.ref.name")
        self.digest = descriptor["digest"]


def is_static_elf(data: bytes) -> bool:
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        headers = subprocess.run(["readelf", "-l", f.name], capture_output=True, text=True).stdout
    return "Program Headers" in headers and "INTERP" not in headers


def check_contents(archive: Archive, build_dir: Path, epoch: int, version: str) -> None:
    values = yaml.safe_load((REPO / "helm/sparkprof/values.yaml").read_text())["installFromImage"]
    chart_image = f"{values['image']['repository']}:{values['image']['tag']}"
    check(archive.ref_name == chart_image,
          f"the archive is named {archive.ref_name}, the chart's default image {chart_image}")
    spark_versions = subprocess.run([str(REPO / "scripts/spark-versions.sh")], check=True,
                                    capture_output=True, text=True).stdout.split()
    created = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    annotations = archive.manifest.get("annotations", {})
    want = {"org.opencontainers.image.version": version,
            "io.sparkprof.spark.versions": ",".join(spark_versions),
            "org.opencontainers.image.created": created,
            "io.sparkprof.source.dir": values["sourceDir"]}
    check(all(annotations.get(k) == v for k, v in want.items()),
          f"manifest annotations {want} (have {annotations})")
    check(annotations.get("org.opencontainers.image.licenses", "").startswith("Apache-2.0")
          and "GPL-2.0-only" in annotations["org.opencontainers.image.licenses"],
          f"licences annotation {annotations.get('org.opencontainers.image.licenses')}")
    config = archive.config.get("config", {})
    check(config.get("User") == "65532:65532" and archive.config.get("os") == "linux"
          and archive.config.get("architecture") == "amd64" and not config.get("Entrypoint"),
          f"config: user {config.get('User')}, {archive.config.get('os')}/"
          f"{archive.config.get('architecture')}, entrypoint {config.get('Entrypoint')}")
    check(archive.config.get("created") == created
          and all(h.get("created") == created for h in archive.config.get("history", [])),
          f"config and history created at {created}: {archive.config.get('created')}, "
          f"{[h.get('created') for h in archive.config.get('history', [])]}")

    jar = f"sparkprof-spark-{version}.jar"
    expected_files = {"bin/busybox", f"sparkprof/{jar}", "sparkprof/libsparkprof.so",
                      "sparkprof/libsparkprof_driver.so", "licenses/sparkprof/LICENSE",
                      "licenses/debian/busybox-static/copyright", SBOM}
    files = set(archive.data)
    check(archive.layer_count == 1 and expected_files <= files
          and all(f.startswith("licenses/debian/") for f in files - expected_files),
          f"one layer with {sorted(expected_files)} and Debian copyright files: {sorted(files)}")
    links = {name: m.linkname for name, m in archive.members.items() if m.issym()}
    check(links == {"bin/sh": "busybox", "bin/cp": "busybox"}, f"symbolic links {links}")
    check(is_static_elf(archive.data.get("bin/busybox", b"")), "/bin/busybox is a static ELF")
    odd = [name for name, m in archive.members.items()
           if m.mtime != epoch or m.uid != 0 or m.gid != 0]
    check(not odd, f"every entry's time is SOURCE_DATE_EPOCH {epoch} and owner 0:0: {odd[:5]}")
    built = {"libsparkprof.so": build_dir / "spark-plugin/native/libsparkprof.so",
             "libsparkprof_driver.so": build_dir / "spark-plugin/native/libsparkprof_driver.so",
             jar: build_dir / "spark-plugin/maven" / jar}
    same = [name for name, path in built.items()
            if archive.data.get(f"sparkprof/{name}") == path.read_bytes()]
    check(len(same) == len(built), f"/sparkprof holds the build's files byte for byte: {same}")

    sbom = json.loads(archive.data.get(SBOM, b"{}"))
    listed = {entry["fileName"].removeprefix("./"): entry["checksums"][0]["checksumValue"]
              for entry in sbom.get("files", [])}
    actual = {name: hashlib.sha256(data).hexdigest() for name, data in archive.data.items()
              if name != SBOM}
    check(sbom.get("spdxVersion") == "SPDX-2.3" and listed == actual,
          f"the SBOM lists every file with its sha256 ({len(listed)} listed, {len(actual)} in "
          f"the layer; differing: {sorted(set(listed.items()) ^ set(actual.items()))[:4]})")
    packages = {p["name"]: p for p in sbom.get("packages", [])}
    busybox_version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "busybox-static"],
                                     capture_output=True, text=True).stdout
    check(packages.get("busybox-static", {}).get("versionInfo") == busybox_version,
          f"the SBOM names busybox-static {busybox_version}: "
          f"{packages.get('busybox-static', {}).get('versionInfo')}")
    check(packages.get("sparkprof", {}).get("versionInfo") == version,
          f"the SBOM names sparkprof {version}")
    maven = [p for p in packages.values() if any(r["referenceLocator"].startswith("pkg:maven/")
                                                   for r in p.get("externalRefs", []))]
    check(any(p["name"] == "io.opentelemetry:opentelemetry-sdk" for p in maven),
          f"the SBOM names the shaded Maven artifacts: {sorted(p['name'] for p in maven)}")
    ids = {p["SPDXID"] for p in sbom.get("packages", [])} | \
          {f["SPDXID"] for f in sbom.get("files", [])} | {"SPDXRef-DOCUMENT"}
    dangling = [r for r in sbom.get("relationships", [])
                if r["spdxElementId"] not in ids or r["relatedSpdxElement"] not in ids]
    check(not dangling and len(ids) == len(packages) + len(listed) + 1,
          f"SPDX ids unique and every relationship names known elements: {dangling[:3]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", type=Path, default=REPO / "build")
    parser.add_argument("--out", type=Path, default=None, help="default BUILD_DIR/image")
    args = parser.parse_args()
    missing = [tool for tool in ("umoci", "skopeo", "readelf") if not shutil.which(tool)]
    if missing or not os.path.exists("/usr/share/doc/busybox-static/copyright"):
        print(f"SKIPPED: {missing or 'busybox-static'} missing (scripts/install-deps.sh --image)")
        return SKIPPED
    if not os.access(PYSPDXTOOLS, os.X_OK):
        print(f"SKIPPED: no {PYSPDXTOOLS} (scripts/install-kubeconform.sh)")
        return SKIPPED
    build_dir = args.build_dir.resolve()
    out = (args.out or build_dir / "image").resolve()
    shutil.rmtree(out, ignore_errors=True)
    version = pom_version()
    epoch = int(subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%ct"], check=True,
                               capture_output=True, text=True).stdout)
    first = build(build_dir, out)
    with tempfile.TemporaryDirectory(prefix="sparkprof-image-") as work:
        second = build(build_dir, Path(work) / "second")
        check(first == second, f"two builds from the same inputs: {first} and {second}")
        later = build(build_dir, Path(work) / "later", str(epoch + 1))
        check(later != first, f"a build with SOURCE_DATE_EPOCH + 1 differs: {later}")
    archive_path = out / f"sparkprof-files-{version}.oci.tar"
    archive = Archive(archive_path)
    check(archive.digest == first and
          "sha256:" + hashlib.sha256(archive.manifest_bytes).hexdigest() == first,
          f"the archive's manifest is {first} (the digest build-image.sh printed)")
    check_contents(archive, build_dir, epoch, version)
    sbom_path = out / f"sparkprof-files-{version}.spdx.json"
    check(sbom_path.read_bytes() == archive.data.get(SBOM),
          "the SBOM beside the archive is the image's")
    validation = subprocess.run([str(PYSPDXTOOLS), "-i", str(sbom_path)], capture_output=True,
                                text=True)
    check(validation.returncode == 0,
          "pyspdxtools finds the SBOM valid SPDX: "
          + (validation.stdout + validation.stderr)[-600:])
    print(f"image: {archive_path} {first}: " + ("PASS" if not failures
                                                 else f"{len(failures)} check(s) failed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
