#!/usr/bin/env bash
# Builds the sparkprof files image -- the image the Helm chart's init container copies from
# (helm/sparkprof/values.yaml, installFromImage) -- as an OCI archive, without a container daemon:
# GNU tar writes the one layer, umoci makes the OCI image layout, skopeo writes the archive.
#
#   /sparkprof/libsparkprof.so, libsparkprof_driver.so, sparkprof-spark-<version>.jar
#                         (installFromImage.sourceDir; the libraries are the jar's stripped copies)
#   /bin/busybox, /bin/sh and /bin/cp -> busybox   (Debian's busybox-static: the static copier)
#   /licenses/...         sparkprof's licence, the Debian copyright files of busybox-static and of
#                         the libraries the jar carries
#   /sbom/sparkprof-files.spdx.json   the SBOM (scripts/image_contents.py), also written beside
#                         the archive
#
# No root user (65532:65532), nothing writes to the image's own filesystem (the copy goes to the
# mounted volume), so it runs with a read-only root filesystem. Reproducible: every file's time is
# SOURCE_DATE_EPOCH (default: the last commit's time), the layer's entries are sorted with owner
# 0:0, and the config and history times are the same instant, so the same inputs give the same
# manifest digest (tests/image/image_build_test.sh builds twice and compares).
#
# Writes into OUT (default build/image):
#   sparkprof-files-<version>.oci.tar    the OCI archive, named REPOSITORY:TAG
#   sparkprof-files-<version>.spdx.json  the SBOM
#   sparkprof-files-<version>.digest     the manifest digest (sha256:...)
# REPOSITORY and TAG default to the chart's installFromImage.image values, so the archive is the
# image the chart names. Push it with skopeo (docs/image.md):
#   skopeo copy oci-archive:build/image/sparkprof-files-0.1.0.oci.tar \
#     docker://ghcr.io/sparkprof/sparkprof-files:0.1.0
#
# Usage: scripts/build-image.sh [--build-dir DIR] [--out DIR] [--repository REPO] [--tag TAG]
# Needs the release build's plugin jar (scripts/build.sh release) and umoci, skopeo and
# busybox-static (scripts/install-deps.sh --image).
set -euo pipefail
repo_root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="$repo_root/build"
out=""
repository=""
tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --repository) repository="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    *) echo "build-image: unknown argument $1" >&2; exit 2 ;;
  esac
done
out="${out:-$build_dir/image}"
die() { echo "build-image: $*" >&2; exit 1; }

values="$repo_root/helm/sparkprof/values.yaml"
# The chart's installFromImage.image.{repository,tag}: the first "repository:" and "tag:" lines
# after "installFromImage:" (values.yaml keeps that block's order; helm/tests check the result).
chart_image_value() {
  awk -v key="$1" '/^installFromImage:/ {inside = 1; next} /^[^ #]/ {inside = 0}
    inside && $1 == key ":" {gsub(/"/, "", $2); print $2; exit}' "$values"
}
repository="${repository:-$(chart_image_value repository)}"
tag="${tag:-$(chart_image_value tag)}"
source_dir=$(chart_image_value sourceDir)
[ -n "$repository" ] && [ -n "$tag" ] && [ "$source_dir" = /sparkprof ] ||
  die "cannot read installFromImage.image.repository/tag and sourceDir=/sparkprof from $values"

version=$(sed -n 's:^  <version>\([^<]*\)</version>.*:\1:p' "$repo_root/spark-plugin/pom.xml" | head -1)
jar="$build_dir/spark-plugin/maven/sparkprof-spark-$version.jar"
natives="$build_dir/spark-plugin/native"
for file in "$jar" "$natives/libsparkprof.so" "$natives/libsparkprof_driver.so"; do
  [ -f "$file" ] || die "$file is missing (scripts/build.sh release builds the plugin jar)"
done
for tool in umoci skopeo tar python3; do
  command -v "$tool" >/dev/null || die "$tool is not installed (scripts/install-deps.sh --image)"
done
busybox=/bin/busybox
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "install ok installed" ||
  die "busybox-static is not installed (scripts/install-deps.sh --image)"
# A dynamic busybox (Debian's busybox package) would need a libc the image does not have.
if readelf -l "$busybox" | grep -q "Requesting program interpreter"; then
  die "$busybox is dynamically linked; the image needs busybox-static's"
fi

epoch="${SOURCE_DATE_EPOCH:-$(git -C "$repo_root" log -1 --format=%ct 2>/dev/null || true)}"
[[ "$epoch" =~ ^[0-9]+$ ]] || die "set SOURCE_DATE_EPOCH (no git history to take it from)"
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
revision=$(git -C "$repo_root" rev-parse HEAD 2>/dev/null || echo unknown)
spark_versions=$("$repo_root/scripts/spark-versions.sh" | paste -sd, -)

mkdir -p "$out"
work=$(mktemp -d "$out/.work.XXXXXX")
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
mkdir -p "$rootfs/bin" "$rootfs/sparkprof"
cp "$busybox" "$rootfs/bin/busybox"
ln -s busybox "$rootfs/bin/sh"
ln -s busybox "$rootfs/bin/cp"
cp "$natives/libsparkprof.so" "$natives/libsparkprof_driver.so" "$jar" "$rootfs/sparkprof/"

# Licences and the SBOM (it lists every other file with its sha256, the Debian packages and the
# Maven artifacts shaded into the jar).
sbom_name="sparkprof-files-$version.spdx.json"
licenses=$(python3 "$repo_root/scripts/image_contents.py" --rootfs "$rootfs" --repo "$repo_root" \
  --jar "$rootfs/sparkprof/sparkprof-spark-$version.jar" --driver-library "$natives/libsparkprof_driver.so" \
  --dependencies "$natives/driver-dependencies.txt" --image "$repository:$tag" --version "$version" \
  --spark-versions "$spark_versions" --created "$created" --maven-work "$work/maven" \
  --sbom "sbom/sparkprof-files.spdx.json")

# Fixed modes and times; then one layer, entries sorted, owner 0:0, no access/change times.
find "$rootfs" -type d -exec chmod 0755 {} +
find "$rootfs" -type f -exec chmod 0644 {} +
chmod 0755 "$rootfs/bin/busybox" "$rootfs/sparkprof/"*.so
find "$rootfs" -exec touch -h -d "@$epoch" {} +
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=posix \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
  -C "$rootfs" -cf "$work/layer.tar" bin licenses sbom sparkprof

layout="$work/oci"
image="$layout:$tag"
umoci init --layout "$layout"
umoci new --image "$image"
umoci raw add-layer --image "$image" --history.created "$created" \
  --history.created_by "scripts/build-image.sh" \
  --history.comment "sparkprof $version files for the Helm chart's init container" "$work/layer.tar"
annotations=(
  "org.opencontainers.image.title=sparkprof-files"
  "org.opencontainers.image.description=sparkprof's JVMTI agent, driver library and Spark plugin jar in $source_dir, with a static busybox to copy them (the sparkprof Helm chart's init container)"
  "org.opencontainers.image.version=$version"
  "org.opencontainers.image.created=$created"
  "org.opencontainers.image.revision=$revision"
  "org.opencontainers.image.licenses=$licenses"
  "io.sparkprof.spark.versions=$spark_versions"
  "io.sparkprof.source.dir=$source_dir"
  "io.sparkprof.sbom=/sbom/sparkprof-files.spdx.json"
)
config_args=()
for annotation in "${annotations[@]}"; do
  config_args+=(--manifest.annotation "$annotation" --config.label "$annotation")
done
umoci config --image "$image" --no-history --created "$created" --author sparkprof \
  --os linux --architecture amd64 --config.user 65532:65532 --config.workingdir / \
  --config.env PATH=/bin "${config_args[@]}"
umoci gc --layout "$layout"

archive="$out/sparkprof-files-$version.oci.tar"
rm -f "$archive"
skopeo copy --quiet "oci:$image" "oci-archive:$archive:$repository:$tag"
digest=$(skopeo inspect --raw "oci-archive:$archive" | sha256sum | cut -d' ' -f1)
layout_digest=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' \
  "$layout/index.json")
[ "sha256:$digest" = "$layout_digest" ] ||
  die "the archive's manifest (sha256:$digest) is not the one umoci wrote ($layout_digest)"
cp "$rootfs/sbom/sparkprof-files.spdx.json" "$out/$sbom_name"
echo "sha256:$digest" >"$out/sparkprof-files-$version.digest"
echo "build-image: $archive ($repository:$tag, sha256:$digest, SOURCE_DATE_EPOCH=$epoch)"
