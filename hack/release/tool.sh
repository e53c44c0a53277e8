#!/usr/bin/env bash
# Prints the path of a tool pinned in hack/tools/NAME/go.mod, building it
# into the cache first if needed (keyed by the module's go.sum).
#
# usage: hack/release/tool.sh NAME   (ko, crane)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
name=$1
mod=$repo/hack/tools/$name
[ -f "$mod/go.mod" ] || { echo "no hack/tools/$name/go.mod" >&2; exit 2; }
pkg=$(awk '$1 == "tool" {print $2}' "$mod/go.mod")
key=$(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-12)
bin=${MPI_OPERATOR_CACHE:-$HOME/.cache/mpi-operator}/bin/$name-$key
if [ ! -x "$bin" ]; then
  mkdir -p "$(dirname "$bin")"
  echo ">> building $name ($pkg) from the Go module proxy" >&2
  (cd "$mod" && go build -o "$bin.tmp" "$pkg" && mv "$bin.tmp" "$bin")
fi
echo "$bin"
