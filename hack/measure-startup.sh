#!/usr/bin/env bash
# Measures, on the local cluster, the time from `kubectl apply` of an MPIJob
# with N workers (Open MPI, /opt/mpi/ranks on N ranks) to its Succeeded
# condition, RUNS times, and prints each run and the median.
#
# usage: hack/measure-startup.sh N [RUNS]     (the cluster must be up)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/cluster/lib.sh
. "$here/cluster/lib.sh"
n=$1 runs=${2:-3}

manifest() {
  cat <<EOF
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: ranks, namespace: $1}
spec:
  runPolicy: {cleanPodPolicy: All}
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
          - {name: launcher, image: $REGISTRY/openmpi:e2e, imagePullPolicy: Never, command: [mpirun, -n, "$n", /opt/mpi/ranks]}
    Worker:
      replicas: $n
      template:
        spec:
          containers:
          - {name: worker, image: $REGISTRY/openmpi:e2e, imagePullPolicy: Never}
EOF
}

times=()
for run in $(seq "$runs"); do
  ns=startup-$n-$run
  kctl delete namespace "$ns" --ignore-not-found --wait >/dev/null
  kctl create namespace "$ns" >/dev/null
  t0=$(date +%s.%N)
  manifest "$ns" | kctl apply -f - >/dev/null
  kctl -n "$ns" wait --for=condition=Succeeded mpijob/ranks --timeout=600s >/dev/null
  t1=$(date +%s.%N)
  hosts=$(kctl -n "$ns" logs job/ranks-launcher 2>/dev/null | awk '/^RANK/ {print $4}' | sort -u | wc -l)
  t=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
  echo "N=$n run $run: $t s from apply to Succeeded ($hosts distinct worker hosts)"
  times+=("$t")
  kctl delete namespace "$ns" --wait=false >/dev/null
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
echo "N=$n median of $runs: $median s"
