# Settings shared by hack/kueue/up.sh and down.sh (sourced after
# hack/cluster/lib.sh). Kueue runs as a process of this machine beside the
# local cluster; what it writes lives under $KUEUE_DIR, its log in
# $LOGS/kueue.log, its pid in $DIR/pids/kueue.

KUEUE_VERSION=v0.17.0
KUEUE_DIR=$DIR/kueue
# Built once per machine (go install, ~5 min on 2 cores) and kept outside
# the clone, so CI's fresh clones reuse it.
KUEUE_BIN=${MPI_OPERATOR_CACHE:-$HOME/.cache/mpi-operator}/kueue-$KUEUE_VERSION/kueue
# Loopback only: the API server calls the webhooks here, and nothing off
# the machine can reach Kueue. MultiKueue's manager cluster runs a second
# Kueue with ports of its own (hack/multikueue/up.sh).
KUEUE_WEBHOOK_ADDR=${KUEUE_WEBHOOK_ADDR:-127.0.0.1:9443}
KUEUE_HEALTH_ADDR=${KUEUE_HEALTH_ADDR:-127.0.0.1:18081}
KUEUE_METRICS_ADDR=${KUEUE_METRICS_ADDR:-127.0.0.1:18443}
# The label hack/kueue/localwebhooks puts on the webhook configurations.
KUEUE_WEBHOOK_LABEL=mpi-operator.kubeflow.org/local-kueue
# Kueue's kinds that hold finalizers only Kueue removes, namespaced first.
KUEUE_KINDS=(workloads localqueues clusterqueues resourceflavors workloadpriorityclasses cohorts topologies admissionchecks)

# kueue_module_dir prints where Kueue's module (its CRDs and webhook
# manifests) is in the module cache, downloading it if needed. It runs
# outside the repository's module so that go.mod and go.sum stay untouched.
kueue_module_dir() {
  (cd / && GOFLAGS=-mod=mod GOWORK=off go mod download -json "sigs.k8s.io/kueue@$KUEUE_VERSION" |
    sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
}

# kueue_installed: Kueue's CRDs are served.
kueue_installed() {
  kctl get crd clusterqueues.kueue.x-k8s.io >/dev/null 2>&1
}
