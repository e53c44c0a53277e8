# Settings and helpers shared by the local cluster's scripts (sourced).
# Everything the cluster writes lives under $DIR; its logs under $LOGS.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${MPI_OPERATOR_CLUSTER_DIR:-/var/lib/mpi-operator-cluster}
LOGS=$DIR/logs
NODE_NAME=mpi-node
BRIDGE=mpiop0
NODE_IP=${NODE_IP:-10.244.0.1}
POD_CIDR=10.244.0.0/16
POD_SUBNET=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/16
CLUSTER_DOMAIN=cluster.local
ETCD_PORT=${ETCD_PORT:-12379}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-12380}
# Health ports of controller-manager and scheduler (loopback); the
# benchmark cluster runs beside the local one with its own.
CONTROLLER_MANAGER_PORT=${CONTROLLER_MANAGER_PORT:-10257}
SCHEDULER_PORT=${SCHEDULER_PORT:-10259}
REGISTRY=mpi-operator.local
CONTAINERD_SOCK=$DIR/containerd/containerd.sock
# MPI images loaded into the cluster; the first also runs the DNS check.
read -r -a CLUSTER_IMAGES <<< "${MPI_IMAGES:-openmpi openmpi5 mpich}"
export KUBECONFIG=$DIR/admin.conf

kctl() { "$DIR/bin/kubectl" --kubeconfig "$DIR/admin.conf" "$@"; }
ctr() { command ctr --address "$CONTAINERD_SOCK" -n k8s.io "$@"; }

# running NAME: the process of NAME's pid file is alive.
running() {
  local pid
  pid=$(cat "$DIR/pids/$1" 2>/dev/null) || return 1
  kill -0 "$pid" 2>/dev/null
}

# kubelet changes these; down.sh puts them back.
SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory)
save_sysctls() {
  [ -f "$DIR/sysctls.saved" ] && return
  local s
  for s in "${SYSCTLS[@]}"; do
    echo "$s=$(sysctl -n "$s")"
  done > "$DIR/sysctls.saved"
}
