#!/usr/bin/env bash
# Builds the helm CLI (v4) from the Go module proxy, since no release
# download is reachable from these machines, into a cache outside the
# clone keyed by its version; a fresh clone (CI) reuses it. The version is
# the helm.sh/helm/v4 library's in go.mod, so the CLI renders the chart as
# test/manifests does.
#
# usage: hack/build-helm.sh    prints the helm binary's path on stdout.
# A cold build takes a few minutes: callers that share the machine hold
# /tmp/work/heavy.lock or an equivalent around it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
version=$(awk '$1=="helm.sh/helm/v4" {print $2}' "$here/../go.mod")
[ -n "$version" ] || { echo "helm.sh/helm/v4 not found in go.mod" >&2; exit 1; }
dir=${MPI_OPERATOR_CACHE:-$HOME/.cache/mpi-operator}/helm-$version
if [ ! -x "$dir/helm" ]; then
  start=$SECONDS
  echo ">> building helm $version from the Go module proxy (once per machine)" >&2
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/.build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # Outside the repository's module, so go install takes helm's own
  # go.mod (GOFLAGS=-mod=mod would otherwise pick up ours).
  (cd "$tmp" && GOBIN=$tmp GOFLAGS= go install -trimpath -ldflags "-s -w" "helm.sh/helm/v4/cmd/helm@$version")
  mv "$tmp/helm" "$dir/helm"
  echo ">> built helm in $((SECONDS - start))s" >&2
fi
echo "$dir/helm"
