#!/usr/bin/env bash
# The benchmark cluster: the project's etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler on loopback, with kwok playing
# the nodes so Pods are scheduled and Running without containers. It reuses
# the binaries the local cluster builds. The MPIJob CRD is installed; the
# operator is started by the benchmark itself, as a separate process.
#
# usage: hack/bench/up.sh    stop: hack/bench/down.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/bench/lib.sh
. "$here/lib.sh"
# shellcheck source=hack/cluster/steps.sh
. "$here/../cluster/steps.sh"

mkdir -p "$DIR/pids" "$LOGS"
# The audit log records every write of the operator's ServiceAccount (the
# benchmark runs the operator as it, bound to config/rbac's role), so the
# benchmark counts requests per job by verb and resource, as the API server
# saw them. Nobody else's requests are logged; the file is not rotated
# (2000 MB), so offsets into it stay valid for a whole run.
cat > "$DIR/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: ["system:serviceaccount:mpi-operator-bench:mpi-operator"]
  verbs: [create, update, patch, delete, deletecollection]
- level: None
EOF
# The simulated nodes are Ready from their first status write, so two
# default writes to each new node are left out, both of
# kube-controller-manager at its 20 QPS (2026-12-05, 1000 nodes: kwok had
# them all Ready in about 15 s, and the wait for them ended at 1 min 53 s):
# - the not-ready NoSchedule taint, which the TaintNodesByCondition
#   admission plugin puts on every new node and the node lifecycle
#   controller removes once it is Ready, a read and a patch each: 10 nodes
#   a second;
# - the TTL controller's annotation, which tells a kubelet how long to
#   cache Secrets and ConfigMaps (kwok has no kubelet): 20 nodes a second,
#   and every node again each time the node count crosses one of its steps.
# Neither changes how a Pod is scheduled or run once the nodes are there.
export APISERVER_EXTRA_ARGS="--audit-policy-file $DIR/audit-policy.yaml --audit-log-path $LOGS/audit.log \
  --audit-log-format json --audit-log-maxsize 2000 --disable-admission-plugins TaintNodesByCondition"
export CONTROLLER_MANAGER_EXTRA_ARGS="--controllers=*,-ttl"
build_binaries etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubeadm kwok
pki
control_plane
stages=(--config "$here/kwok.yaml")
# pod-stop.yaml and test/podremover replace kwok's pod-delete stage (they
# say why).
for f in "$DIR/bin/kwok-stages/"*.yaml "$here"/launcher-*.yaml "$here"/pod-stop.yaml; do
  [[ $f == */kwok-stages/pod-delete.yaml ]] || stages+=(--config "$f")
done
start kwok "$DIR/bin/kwok" --kubeconfig "$DIR/admin.conf" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
  --node-lease-duration-seconds 40 --server-address 127.0.0.1:10247 "${stages[@]}"
(cd "$REPO" && go build -o "$DIR/podremover" ./test/podremover)
start podremover "$DIR/podremover" --kubeconfig "$DIR/admin.conf"
kctl apply --server-side -f "$REPO/config/crd/bases/" >/dev/null
step "benchmark cluster up; KUBECONFIG=$DIR/admin.conf; logs in $LOGS"
