#!/usr/bin/env bash
# Measures, on the local cluster, where the start of an MPIJob with N
# workers goes (Open MPI, /opt/mpi/ranks on N ranks, one per worker): each
# phase's end from the MPIJob's create, from worker Pods created to the
# Succeeded condition, per run and as the median of RUNS (test/startup).
#
# usage: hack/measure-startup.sh N [RUNS]     (the cluster must be up)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/cluster/lib.sh
. "$here/cluster/lib.sh"
n=$1 runs=${2:-5}
cd "$REPO"
go run ./test/startup -kubeconfig "$DIR/admin.conf" -image "$REGISTRY/openmpi:e2e" -workers "$n" -runs "$runs"
