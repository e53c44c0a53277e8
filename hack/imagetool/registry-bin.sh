#!/usr/bin/env bash
# Prints the path of the loopback registry (hack/imagetool/registry),
# building it into the cache first when its sources changed.
set -euo pipefail
tool=$(cd "$(dirname "$0")" && pwd)
key=$(cat "$tool/go.mod" "$tool/go.sum" "$tool"/registry/*.go | sha256sum | cut -c1-12)
bin=${MPI_OPERATOR_CACHE:-$HOME/.cache/mpi-operator}/bin/registry-$key
if [ ! -x "$bin" ]; then
  mkdir -p "$(dirname "$bin")"
  (cd "$tool" && go build -o "$bin.tmp" ./registry && mv "$bin.tmp" "$bin")
fi
echo "$bin"
