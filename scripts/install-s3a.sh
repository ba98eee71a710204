#!/usr/bin/env bash
# Installs what the S3A tests need (tests/e2e/s3a_observability.py): for each pinned Spark release,
# hadoop-aws of exactly the Hadoop version its distribution ships plus the AWS SDK bundle that
# hadoop-aws release was built against, from Maven Central (pinned, sha256-checked), and moto's S3
# server from PyPI (pinned by python/requirements-lock.txt) in its own virtual environment.
#   <root>/jars/<hadoop version>/*.jar   what --jars / spark.jars gets
#   <root>/moto-venv/bin/moto_server
# Idempotent and quiet when all is present (the jars are ~1 GB the first time).
# Usage: scripts/install-s3a.sh [ROOT] [SPARK_ROOT]  (defaults build/s3a, build/spark)
set -euo pipefail
cd "$(dirname "$0")/.."
root="${1:-build/s3a}"
spark_root="${2:-build/spark}"
python="${PYTHON:-python3}"
central=https://repo1.maven.org/maven2

# hadoop version -> pairs of lines: group/artifact/version, then the jar's sha256 (hadoop-aws's
# own pom names the SDK bundle and its version).
artifacts_for() {
  case "$1" in
    3.3.4) cat <<'EOF'
org/apache/hadoop/hadoop-aws/3.3.4
  53f9ae03c681a30a50aa17524bd9790ab596b28481858e54efd989a826ed3a4a
com/amazonaws/aws-java-sdk-bundle/1.12.262
  873fe7cf495126619997bec21c44de5d992544aea7e632fdc77adb1a0915bae5
EOF
      ;;
    3.5.0) cat <<'EOF'
org/apache/hadoop/hadoop-aws/3.5.0
  66bd9eefb938b1a1657487324b63c13df2d8b17164a1dd24e0ef37b905bc5baa
software/amazon/awssdk/bundle/2.35.4
  db4b55f24ad1b4e70f17eb1717a4de76a8dadc5a27d764be7c44ff67b2c1c677
software/amazon/s3/analyticsaccelerator/analyticsaccelerator-s3/1.3.1
  4959a9747cbb479c73c3ffbcd479bee5b014f8b2880994585a8693fb9d24675e
EOF
      ;;
    *) return 1 ;;
  esac
}

fetch() {  # coordinate sha256 destination-dir
  local coordinate=$1 sha=$2 dir=$3
  local version=${coordinate##*/} rest=${coordinate%/*}
  local artifact=${rest##*/}
  local file="$dir/$artifact-$version.jar"
  [ -f "$file" ] && return 0
  # curl's --retry covers the network, not a write that failed (exit 23: a disk filled by
  # something else for a moment); one more try, then say how much room there was.
  local try
  for try in 1 2; do
    curl -fsSL --retry 3 -o "$file.part" "$central/$coordinate/$artifact-$version.jar" && break
    local rc=$?
    rm -f "$file.part"
    if [ "$try" = 2 ]; then
      echo "install-s3a: could not fetch $artifact-$version.jar (curl exit $rc); free on" \
           "$dir: $(df -Ph "$dir" | awk 'NR==2 {print $4}')" >&2
      exit 1
    fi
    sleep 5
  done
  local got
  got=$(sha256sum "$file.part" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    rm -f "$file.part"
    echo "install-s3a: $artifact-$version.jar has sha256 $got, expected $sha" >&2
    exit 1
  fi
  mv "$file.part" "$file"
}

for version in $(scripts/spark-versions.sh); do
  api=$(ls "$spark_root/$version/home/jars/" 2>/dev/null | grep -o '^hadoop-client-api-.*\.jar$' \
        || true)
  if [ -z "$api" ]; then
    echo "install-s3a: no Spark $version in $spark_root (run scripts/install-spark.sh)" >&2
    exit 1
  fi
  hadoop=${api#hadoop-client-api-}
  hadoop=${hadoop%.jar}
  dir="$root/jars/$hadoop"
  [ -f "$dir/.installed" ] && continue
  if ! lines=$(artifacts_for "$hadoop"); then
    echo "install-s3a: no pinned hadoop-aws for Hadoop $hadoop (Spark $version); add it here" >&2
    exit 1
  fi
  echo "install-s3a: hadoop-aws $hadoop and its AWS SDK into $dir"
  mkdir -p "$dir"
  while read -r coordinate && read -r sha; do
    fetch "$coordinate" "$sha" "$dir"
  done <<<"$lines"
  touch "$dir/.installed"
done

venv="$root/moto-venv"
if [ ! -x "$venv/bin/moto_server" ]; then
  echo "install-s3a: moto[server] into $venv"
  "$python" -m venv "$venv"
  PIP_CONSTRAINT="$PWD/python/requirements-lock.txt" "$venv/bin/pip" install -q \
    --disable-pip-version-check "moto[server]"
fi
