#!/usr/bin/env bash
# Builds the Kubeflow MPI Operator's own binary (the release pinned in
# hack/upstream/go.mod) from the Go module proxy, once per machine and
# version, into a cache outside the clone. Tests run it beside ours to
# prove "as upstream does" with upstream's code, not with our copy of it.
#
# usage: hack/build-upstream.sh
# prints the binary's path on stdout; progress goes to stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
version=$(awk '$1=="require" && $2=="github.com/kubeflow/mpi-operator" {print $3}' "$here/upstream/go.mod")
cache=${MPI_OPERATOR_CACHE:-$HOME/.cache/mpi-operator}
dir="$cache/upstream-$version"
bin="$dir/mpi-operator"
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  start=$SECONDS
  echo ">> building upstream mpi-operator $version from the Go module proxy (once per machine and version)" >&2
  (cd "$here/upstream" && go build -trimpath -ldflags "-s -w" -o "$bin.tmp" github.com/kubeflow/mpi-operator/cmd/mpi-operator)
  mv "$bin.tmp" "$bin"
  echo ">> built upstream mpi-operator in $((SECONDS - start))s" >&2
fi
echo "$bin"
