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
# The first address of SERVICE_CIDR: the kubernetes Service, the API server.
KUBERNETES_SERVICE_IP=10.96.0.1
ETCD_PORT=${ETCD_PORT:-12379}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-12380}
# Health ports of controller-manager and scheduler (loopback); the
# benchmark cluster runs beside the local one with its own.
CONTROLLER_MANAGER_PORT=${CONTROLLER_MANAGER_PORT:-10257}
SCHEDULER_PORT=${SCHEDULER_PORT:-10259}
REGISTRY=mpi-operator.local
CONTAINERD_SOCK=$DIR/containerd/containerd.sock
# A registry on loopback (hack/imagetool/registry) that every node's
# containerd uses as its docker.io mirror: upstream's images
# (mpioperator/mpi-pi:openmpi, ...) are pulled from it as from Docker Hub.
REGISTRY_PORT=${REGISTRY_PORT:-15000}
MIRROR_ADDR=127.0.0.1:$REGISTRY_PORT
# The nodes: each a kubelet with its own containerd, all on the bridge
# $BRIDGE and one host-local IPAM store, so Pod addresses never clash.
NODES=(1 2)
# MPI images loaded into the cluster; the first also runs the DNS check.
read -r -a CLUSTER_IMAGES <<< "${MPI_IMAGES:-openmpi openmpi5 mpich}"
export KUBECONFIG=$DIR/admin.conf

kctl() { "$DIR/bin/kubectl" --kubeconfig "$DIR/admin.conf" "$@"; }
ctr() { command ctr --address "$CONTAINERD_SOCK" -n k8s.io "$@"; }

# node_vars N sets the N_* variables of node N. Node 1 keeps the paths and
# ports the single-node cluster had; node N > 1 lives under $DIR/nodeN,
# with its own kubelet ports, pod log directory and cgroup root (two
# kubelets with the cgroupfs driver must not manage the same kubepods
# cgroups), and its own runc state.
node_vars() {
  if [ "$1" = 1 ]; then
    N_NAME=$NODE_NAME N_DIR=$DIR N_SUFFIX="" N_PORT=10250 N_HEALTHZ=10248 N_CGROUP=""
  else
    N_NAME=$NODE_NAME-$1 N_DIR=$DIR/node$1 N_SUFFIX=-$1
    N_PORT=$((10250 + 100 * ($1 - 1))) N_HEALTHZ=$((10248 + 100 * ($1 - 1))) N_CGROUP=/mpi-operator-node$1
  fi
  N_SOCK=$N_DIR/containerd/containerd.sock
}

# ctr_on SOCK ARGS: ctr against one node's containerd.
ctr_on() { local sock=$1; shift; command ctr --address "$sock" -n k8s.io "$@"; }

# running NAME: the process of NAME's pid file is alive.
running() {
  local pid stat
  pid=$(cat "$DIR/pids/$1" 2>/dev/null) || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  # A process killed but not yet reaped answers kill -0 and runs no more.
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# stop NAME: stops the process of NAME's pid file (TERM, then KILL after
# 10 s) and removes the pid file.
stop() {
  local name=$1 pid
  pid=$(cat "$DIR/pids/$name" 2>/dev/null) || return 0
  if kill -0 "$pid" 2>/dev/null; then
    echo ">> stopping $name" >&2
    kill "$pid"
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$DIR/pids/$name"
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
