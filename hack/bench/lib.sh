# Settings shared by the benchmark cluster's scripts (sourced): its own
# directory, loopback address and ports beside the local cluster's.
export MPI_OPERATOR_CLUSTER_DIR=${MPI_OPERATOR_BENCH_DIR:-/var/lib/mpi-operator-bench}
export NODE_IP=127.0.0.1 KUBEADM_ADDRESS=192.0.2.1 ETCD_PORT=22379 ETCD_PEER_PORT=22380 \
  CONTROLLER_MANAGER_PORT=20257 SCHEDULER_PORT=20259
# A Kueue of its own (hack/bench/kueue-up.sh), beside the local cluster's
# and MultiKueue's manager's (hack/kueue/lib.sh).
export KUEUE_WEBHOOK_ADDR=127.0.0.1:9445 KUEUE_HEALTH_ADDR=127.0.0.1:18083 KUEUE_METRICS_ADDR=127.0.0.1:18445
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
