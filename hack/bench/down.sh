#!/usr/bin/env bash
# Stops the benchmark cluster. --purge also removes its data.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/bench/lib.sh
. "$here/lib.sh"
# Kueue and the operator, when hack/bench/kueue-up.sh started them, go
# with the cluster: Kueue first, its webhooks with it, while the API
# server runs.
if running kueue && running kube-apiserver; then "$here/../kueue/down.sh"; fi
for name in mpi-operator kueue podremover kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
  pid=$(cat "$DIR/pids/$name" 2>/dev/null) || continue
  kill "$pid" 2>/dev/null
  for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$pid" 2>/dev/null
  rm -f "$DIR/pids/$name"
done
[ "${1:-}" = --purge ] && rm -rf "$DIR"
echo ">> benchmark cluster stopped" >&2
