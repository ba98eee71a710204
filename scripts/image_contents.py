#!/usr/bin/env python3
"""The licences and the SBOM of the sparkprof files image (called by scripts/build-image.sh).

Given the image's staged root filesystem, this adds
  licenses/sparkprof/LICENSE                sparkprof's licence (Apache-2.0, Debian's copy of it)
  licenses/debian/<package>/copyright       the Debian copyright file of busybox-static and of each
                                            library the plugin jar carries (driver-dependencies.txt)
  <--sbom>                                  an SPDX 2.3 JSON document
and prints the image's licence expression (for the org.opencontainers.image.licenses annotation).

The SBOM says what is in the image, found from the files themselves: every file with its sha256;
sparkprof (the agent, the driver library, the jar); busybox-static with its Debian version; the
Debian libraries inside the jar; the Maven artifacts the jar shades (the plugin's runtime
dependencies by `mvn dependency:list`, each checked to have classes in the jar under its
relocated name, with the licence its POM declares). Nothing in it depends on the time of the
build (the document's time is SOURCE_DATE_EPOCH's), so the image stays reproducible.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
import zipfile
from pathlib import Path

# Debian copyright (DEP-5) and Maven POM licence names -> SPDX identifiers; anything else is
# NOASSERTION rather than a guess.
SPDX_LICENSES = {
    "apache-2.0": "Apache-2.0",
    "the apache license, version 2.0": "Apache-2.0",
    "apache license, version 2.0": "Apache-2.0",
    "the apache software license, version 2.0": "Apache-2.0",
    "expat": "MIT",
    "mit": "MIT",
    "the mit license": "MIT",
    "gpl-2": "GPL-2.0-only",
    "gpl-2+": "GPL-2.0-or-later",
    "bsd-3-clause": "BSD-3-Clause",
}
# BusyBox is GPL version 2 only (its LICENSE file); Debian's copyright names it "GPL-2".
BUSYBOX_PACKAGE = "busybox-static"
SPARKPROF_LICENSE = "Apache-2.0"
COMMON_LICENSES = Path("/usr/share/common-licenses")
POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def run(command: list[str], **kwargs) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs).stdout


def digest_of(path: Path, algorithm: str = "sha256") -> str:
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verification_code(file_sha1s: list[str]) -> dict:
    """SPDX's package verification code: the SHA1 of the package's files' sorted SHA1s."""
    joined = "".join(sorted(file_sha1s)).encode()
    return {"packageVerificationCodeValue": hashlib.sha1(joined).hexdigest()}


def spdx_id(kind: str, name: str) -> str:
    return f"SPDXRef-{kind}-" + re.sub(r"[^A-Za-z0-9.-]+", "-", name).strip("-")


# ---- Debian packages ---------------------------------------------------------------------------

def debian_package_of(path: str) -> str:
    """The package that installed PATH (dpkg -S), trying the path and its target."""
    for candidate in (path, os.path.realpath(path)):
        try:
            line = run(["dpkg-query", "-S", candidate]).splitlines()[0]
        except subprocess.CalledProcessError:
            continue
        return line.split(":")[0].strip()
    raise SystemExit(f"image_contents: no Debian package owns {path}")


def copyright_license(copyright_file: Path) -> str:
    """The SPDX identifier of the 'Files: *' paragraph's licence in a DEP-5 copyright file."""
    paragraphs = copyright_file.read_text(errors="replace").split("\n\n")
    for paragraph in paragraphs:
        fields = dict(re.findall(r"^(Files|License):[ \t]*(.*)$", paragraph, re.MULTILINE))
        if fields.get("Files", "").strip() == "*" and "License" in fields:
            return SPDX_LICENSES.get(fields["License"].strip().lower(), "NOASSERTION")
    return "NOASSERTION"


def debian_package(name: str, rootfs: Path) -> dict:
    fields = run(["dpkg-query", "-W", "-f=${Version}\t${Architecture}\t${source:Package}", name])
    version, arch, source = fields.split("\t")
    copyright_file = Path("/usr/share/doc") / name / "copyright"
    target = rootfs / "licenses" / "debian" / name / "copyright"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(copyright_file, target)
    license_id = "GPL-2.0-only" if name == BUSYBOX_PACKAGE else copyright_license(copyright_file)
    return {
        "SPDXID": spdx_id("Package-deb", name),
        "name": name,
        "versionInfo": version,
        "supplier": "Organization: Debian",
        "downloadLocation": "NOASSERTION",
        "sourceInfo": f"built from the Debian source package {source} {version}",
        "filesAnalyzed": False,
        "licenseConcluded": license_id,
        "licenseDeclared": license_id,
        "copyrightText": "NOASSERTION",
        "comment": f"Debian's copyright file: /licenses/debian/{name}/copyright",
        "externalRefs": [{
            "referenceCategory": "PACKAGE-MANAGER",
            "referenceType": "purl",
            "referenceLocator": f"pkg:deb/debian/{name}@{version}?arch={arch}",
        }],
    }


def bundled_library_packages(driver_library: str, dependencies: Path) -> list[str]:
    """The Debian packages of the libraries the jar carries next to the driver library."""
    names = [line.strip() for line in dependencies.read_text().splitlines() if line.strip()]
    resolved = {}
    for line in run(["ldd", driver_library]).splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            resolved[parts[0]] = parts[2]
    missing = [name for name in names if name not in resolved]
    if missing:
        raise SystemExit(f"image_contents: ldd {driver_library} does not resolve {missing}")
    return sorted({debian_package_of(resolved[name]) for name in names})


# ---- Maven artifacts shaded into the jar ------------------------------------------------------

def relocations(pom: Path) -> list[tuple[str, str]]:
    root = ElementTree.parse(pom).getroot()
    pairs = []
    for relocation in root.iter(f"{{{POM_NS['m']}}}relocation"):
        pattern = relocation.findtext("m:pattern", namespaces=POM_NS)
        shaded = relocation.findtext("m:shadedPattern", namespaces=POM_NS)
        pairs.append((pattern.replace(".", "/") + "/", shaded.replace(".", "/") + "/"))
    return pairs


def pom_license(jar_path: Path) -> str:
    """The licence the artifact's POM (beside its jar in the local repository) declares."""
    pom = jar_path.with_suffix(".pom")
    if not pom.exists():
        return "NOASSERTION"
    names = [element.text or "" for element in
             ElementTree.parse(pom).getroot().iterfind("m:licenses/m:license/m:name", POM_NS)]
    ids = sorted({SPDX_LICENSES.get(name.strip().lower(), "NOASSERTION") for name in names})
    return " AND ".join(ids) if ids else "NOASSERTION"


def shaded_artifacts(repo: Path, jar: Path, work: Path) -> list[dict]:
    """The plugin's runtime dependencies (what the shade plugin puts in the jar), each checked
    against the jar's entries."""
    listing = work / "runtime-dependencies.txt"
    work.mkdir(parents=True, exist_ok=True)
    pom = repo / "spark-plugin" / "pom.xml"
    run(["mvn", "-B", "-q", "--no-transfer-progress", "-f", str(pom), "-P", "spark-3.5",
         f"-Dsparkprof.build.dir={work / 'target'}", "dependency:list",
         "-DincludeScope=runtime", "-DoutputAbsoluteArtifactFilename=true",
         f"-DoutputFile={listing}"])
    in_jar = set(zipfile.ZipFile(jar).namelist())
    moves = relocations(pom)
    artifacts = []
    # group:artifact:jar[:classifier]:version:scope:/path/to.jar (outputAbsoluteArtifactFilename)
    line_form = re.compile(
        r"^\s*([^:\s]+):([^:\s]+):jar:(?:[^:\s]+:)?([^:\s]+):(compile|runtime):(/\S+\.jar)")
    for line in listing.read_text().splitlines():
        match = line_form.match(line)
        if not match:
            continue
        group, artifact, version, _, path = match.groups()
        classes = [name for name in zipfile.ZipFile(path).namelist() if name.endswith(".class")
                   and not name.startswith("META-INF/") and name != "module-info.class"]
        shaded = set()
        for name in classes:
            for pattern, target in moves:
                if name.startswith(pattern):
                    name = target + name[len(pattern):]
                    break
            shaded.add(name)
        found = len(shaded & in_jar)
        if classes and not found:
            raise SystemExit(f"image_contents: none of {group}:{artifact}:{version}'s "
                             f"{len(classes)} classes is in {jar.name}")
        license_id = pom_license(Path(path))
        artifacts.append({
            "SPDXID": spdx_id("Package-maven", f"{group}-{artifact}"),
            "name": f"{group}:{artifact}",
            "versionInfo": version,
            "downloadLocation": "NOASSERTION",
            "filesAnalyzed": False,
            "checksums": [{"algorithm": "SHA256", "checksumValue": digest_of(Path(path))}],
            "licenseConcluded": license_id,
            "licenseDeclared": license_id,
            "copyrightText": "NOASSERTION",
            "comment": f"shaded into the plugin jar: {found} of its {len(classes)} classes, "
                       "relocated under io/sparkprof/shaded where the pom says so",
            "externalRefs": [{
                "referenceCategory": "PACKAGE-MANAGER",
                "referenceType": "purl",
                "referenceLocator": f"pkg:maven/{group}/{artifact}@{version}",
            }],
        })
    if not artifacts:
        raise SystemExit(f"image_contents: mvn dependency:list listed nothing in {listing}")
    return sorted(artifacts, key=lambda a: a["name"])


# ---- the document -----------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rootfs", type=Path, required=True)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--jar", type=Path, required=True, help="the jar inside --rootfs")
    parser.add_argument("--driver-library", required=True, help="for ldd: the jar's libraries")
    parser.add_argument("--dependencies", type=Path, required=True, help="driver-dependencies.txt")
    parser.add_argument("--image", required=True, help="REPOSITORY:TAG")
    parser.add_argument("--version", required=True)
    parser.add_argument("--spark-versions", required=True)
    parser.add_argument("--created", required=True, help="ISO time (SOURCE_DATE_EPOCH)")
    parser.add_argument("--maven-work", type=Path, required=True)
    parser.add_argument("--sbom", required=True, help="path of the SBOM inside --rootfs")
    args = parser.parse_args()
    rootfs = args.rootfs

    license_file = rootfs / "licenses" / "sparkprof" / "LICENSE"
    license_file.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(COMMON_LICENSES / SPARKPROF_LICENSE, license_file)

    busybox = debian_package(BUSYBOX_PACKAGE, rootfs)
    libraries = [debian_package(name, rootfs) for name in
                 bundled_library_packages(args.driver_library, args.dependencies)]
    maven = shaded_artifacts(args.repo, args.jar, args.maven_work)
    sparkprof = {
        "SPDXID": "SPDXRef-Package-sparkprof",
        "name": "sparkprof",
        "versionInfo": args.version,
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False,
        "licenseConcluded": SPARKPROF_LICENSE,
        "licenseDeclared": SPARKPROF_LICENSE,
        "copyrightText": "NOASSERTION",
        "comment": f"the JVMTI agent, the driver library and the Spark plugin jar, tested with "
                   f"Spark {args.spark_versions}",
    }
    image_name, _, image_tag = args.image.rpartition(":")
    image = {
        "SPDXID": "SPDXRef-Package-image",
        "name": image_name,
        "versionInfo": image_tag,
        "primaryPackagePurpose": "CONTAINER",
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": True,
        "licenseConcluded": "NOASSERTION",
        "licenseDeclared": "NOASSERTION",
        "copyrightText": "NOASSERTION",
        "comment": "built by scripts/build-image.sh; the Spark versions it was tested with: "
                   + args.spark_versions,
    }

    files = []
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                      "relatedSpdxElement": image["SPDXID"]}]
    owners = {"bin/busybox": busybox["SPDXID"]}
    sha1s: dict[str, list[str]] = {}  # package SPDXID: its files' SHA1s
    for path in sorted(p for p in rootfs.rglob("*") if p.is_file() and not p.is_symlink()):
        relative = path.relative_to(rootfs).as_posix()
        if relative.startswith("sparkprof/"):
            owners[relative] = sparkprof["SPDXID"]
        file_id = spdx_id("File", relative)
        sha1 = digest_of(path, "sha1")
        # SPDX 2.3 requires a file's SHA1; the SHA256 is the one to trust.
        entry = {"SPDXID": file_id, "fileName": "./" + relative,
                 "checksums": [{"algorithm": "SHA256", "checksumValue": digest_of(path)},
                               {"algorithm": "SHA1", "checksumValue": sha1}],
                 "licenseConcluded": "NOASSERTION", "copyrightText": "NOASSERTION"}
        if relative == "bin/busybox":
            entry["comment"] = "also /bin/sh and /bin/cp (symbolic links to busybox)"
        files.append(entry)
        relationships.append({"spdxElementId": image["SPDXID"], "relationshipType": "CONTAINS",
                              "relatedSpdxElement": file_id})
        sha1s.setdefault(image["SPDXID"], []).append(sha1)
        if relative in owners:
            sha1s.setdefault(owners[relative], []).append(sha1)
            relationships.append({"spdxElementId": owners[relative],
                                  "relationshipType": "CONTAINS", "relatedSpdxElement": file_id})
    jar_id = spdx_id("File", args.jar.relative_to(rootfs).as_posix())
    for package in libraries + maven:
        relationships.append({"spdxElementId": jar_id, "relationshipType": "CONTAINS",
                              "relatedSpdxElement": package["SPDXID"]})
    # A package that contains files lists them as analysed, with their verification code.
    for package in (image, sparkprof, busybox):
        package["filesAnalyzed"] = True
        package["packageVerificationCode"] = verification_code(sha1s[package["SPDXID"]])
    packages = [image, sparkprof, busybox, *libraries, *maven]
    content_id = hashlib.sha256(json.dumps([packages, files], sort_keys=True).encode()).hexdigest()
    document = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{args.image} (sparkprof files image)",
        "documentNamespace": f"https://sparkprof.io/spdx/sparkprof-files-{args.version}-{content_id}",
        "creationInfo": {"created": args.created,
                         "creators": ["Tool: sparkprof scripts/build-image.sh"]},
        "packages": packages,
        "files": files,
        "relationships": relationships,
    }
    sbom = rootfs / args.sbom
    sbom.parent.mkdir(parents=True, exist_ok=True)
    sbom.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")

    licenses = sorted({p["licenseDeclared"] for p in packages[1:]} - {"NOASSERTION"})
    print(" AND ".join(licenses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
