#!/usr/bin/env bash
# Writes the krew plugin manifest of kubectl-mpi (kubectl krew install
# --manifest=mpi.yaml), each platform's sha256 read from checksums.txt.
#
# usage: hack/release/krew.sh VERSION URL CHECKSUMS
set -euo pipefail
version=$1 url=$2 sums=$3
cat <<EOT
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: mpi
spec:
  version: $version
  homepage: https://github.com/mpi-operator/mpi-operator
  shortDescription: Inspect MPIJobs - phase, workers, startup, failures, logs
  description: |
    Shows where an MPIJob (kubeflow.org/v2beta1) is: its phase, workers
    running, each startup step with its time, the last failure naming the
    Pod and exit code, mpirun's output across launcher retries, and the
    hostfile the operator wrote.
  platforms:
EOT
for os in darwin linux; do
  for arch in amd64 arm64; do
    archive=kubectl-mpi_${version}_${os}_${arch}.tar.gz
    sha=$(awk -v f="$archive" '$2 == f {print $1}' "$sums")
    [ -n "$sha" ] || { echo "no sha256 of $archive in $sums" >&2; exit 1; }
    cat <<EOT
  - selector:
      matchLabels:
        os: $os
        arch: $arch
    uri: $url/$archive
    sha256: $sha
    bin: kubectl-mpi
    files:
    - from: kubectl-mpi
      to: .
    - from: LICENSE
      to: .
EOT
  done
done
