#!/usr/bin/env bash
# Stops the benchmark cluster. --purge also removes its data.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export MPI_OPERATOR_CLUSTER_DIR=${MPI_OPERATOR_BENCH_DIR:-/var/lib/mpi-operator-bench}
# shellcheck source=hack/cluster/lib.sh
. "$here/../cluster/lib.sh"
for name in podremover kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
  pid=$(cat "$DIR/pids/$name" 2>/dev/null) || continue
  kill "$pid" 2>/dev/null
  for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$pid" 2>/dev/null
  rm -f "$DIR/pids/$name"
done
[ "${1:-}" = --purge ] && rm -rf "$DIR"
echo ">> benchmark cluster stopped" >&2
