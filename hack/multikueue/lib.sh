# Settings shared by hack/multikueue/up.sh and down.sh (sourced). The
# manager cluster lives under $DIR, as the benchmark cluster does under
# its own; the worker is the local cluster, reached with wctl.

export MPI_OPERATOR_CLUSTER_DIR=${MPI_OPERATOR_MANAGER_DIR:-/var/lib/mpi-operator-manager}
# A loopback address of its own: its API server listens on 6443 there, as
# the local cluster's does on its bridge and the benchmark's on 127.0.0.1.
# kubeadm refuses a loopback address, and gets a stand-in (hack/cluster/steps.sh pki).
export NODE_IP=127.0.0.2 KUBEADM_ADDRESS=192.0.2.2 ETCD_PORT=32379 ETCD_PEER_PORT=32380 \
  CONTROLLER_MANAGER_PORT=30257 SCHEDULER_PORT=30259
# The manager's Kueue, beside the worker's (hack/kueue/lib.sh).
export KUEUE_WEBHOOK_ADDR=127.0.0.1:9444 KUEUE_HEALTH_ADDR=127.0.0.1:18082 KUEUE_METRICS_ADDR=127.0.0.1:18444
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"

OPERATOR_METRICS_ADDR=127.0.0.1:18090
OPERATOR_HEALTH_ADDR=127.0.0.1:18091
# Kueue's namespace (its configuration's default), where MultiKueue reads
# the worker's kubeconfig.
KUEUE_NAMESPACE=kueue-system
# The worker, as the manager's MultiKueueCluster and Secret name it.
WORKER_CLUSTER=worker1
WORKER_DIR=/var/lib/mpi-operator-cluster
WORKER_SA=multikueue-manager
WORKER_SA_NAMESPACE=multikueue
# A week, renewed by every hack/multikueue/up.sh.
TOKEN_DURATION=168h

wctl() { "$WORKER_DIR/bin/kubectl" --kubeconfig "$WORKER_DIR/admin.conf" "$@"; }
