#!/usr/bin/env bash
# MultiKueue's manager cluster beside the local one, which is its worker:
# etcd, kube-apiserver, kube-controller-manager and kube-scheduler on
# 127.0.0.2 with no node at all, the MPIJob CRD, a Kueue of its own with
# MultiKueue (hack/kueue/up.sh, on other ports), and this operator as a
# process, which must leave the jobs MultiKueue manages alone. On the
# worker it makes what the manager's Kueue connects with: a ServiceAccount
# bound to the least a MultiKueue manager needs there, and its token in a
# kubeconfig, stored on the manager as the Secret a MultiKueueCluster
# names. Queues, MultiKueueConfigs and AdmissionChecks are the user's (the
# e2e tests make theirs; docs/kueue.md shows them). Idempotent.
#
# usage: hack/multikueue/up.sh   (the local cluster and its Kueue must be up)
# stop:  hack/multikueue/down.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/multikueue/lib.sh
. "$here/lib.sh"
# shellcheck source=hack/cluster/steps.sh
. "$here/../cluster/steps.sh"

# worker_access FILE makes, on the worker, the ServiceAccount the
# manager's Kueue acts as, and writes a kubeconfig for it to FILE: the
# worker's CA inline and a token (Kueue refuses file paths and skipped
# TLS checks), made with the kubectl config commands docs/kueue.md gives.
worker_access() {
  wctl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: $WORKER_SA_NAMESPACE}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: $WORKER_SA, namespace: $WORKER_SA_NAMESPACE}
---
# What MultiKueue does on a worker for MPIJobs: it creates the job and its
# prebuilt Workload, reads back their status, and deletes them.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $WORKER_SA}
rules:
- apiGroups: [kubeflow.org]
  resources: [mpijobs]
  verbs: [create, update, patch, delete, get, list, watch]
- apiGroups: [kubeflow.org]
  resources: [mpijobs/status]
  verbs: [get]
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [create, update, patch, delete, get, list, watch]
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads/status]
  verbs: [get, patch, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: $WORKER_SA}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: $WORKER_SA}
subjects:
- {kind: ServiceAccount, name: $WORKER_SA, namespace: $WORKER_SA_NAMESPACE}
EOF
  local cfg=$1 token server
  token=$(wctl create token "$WORKER_SA" -n "$WORKER_SA_NAMESPACE" --duration "$TOKEN_DURATION")
  server=$(wctl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  local k=("$DIR/bin/kubectl" config --kubeconfig "$cfg")
  "${k[@]}" set-cluster "$WORKER_CLUSTER" --server "$server" \
    --certificate-authority "$WORKER_DIR/pki/ca.crt" --embed-certs=true >/dev/null
  "${k[@]}" set-credentials "$WORKER_SA" --token "$token" >/dev/null
  "${k[@]}" set-context "$WORKER_CLUSTER" --cluster "$WORKER_CLUSTER" --user "$WORKER_SA" >/dev/null
  "${k[@]}" use-context "$WORKER_CLUSTER" >/dev/null
}

# worker_secret stores the worker's kubeconfig on the manager, in Kueue's
# namespace, under the key MultiKueue reads. The token is renewed on every
# run; the Secret is never printed.
worker_secret() {
  step "the worker's kubeconfig, as Secret $KUEUE_NAMESPACE/$WORKER_CLUSTER on the manager"
  kctl create namespace "$KUEUE_NAMESPACE" --dry-run=client -o yaml | kctl apply -f - >/dev/null
  local cfg; cfg=$(mktemp); chmod 600 "$cfg"
  worker_access "$cfg"
  kctl create secret generic "$WORKER_CLUSTER" -n "$KUEUE_NAMESPACE" --from-file=kubeconfig="$cfg" \
    --dry-run=client -o yaml | kctl apply -f - >/dev/null
  rm -f "$cfg"
}

main() {
  wctl get --raw /readyz >/dev/null 2>&1 ||
    { echo "the local cluster (the worker) is not up: run make kueue-up first" >&2; exit 1; }
  mkdir -p "$DIR/pids" "$LOGS"
  build_binaries etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubeadm
  pki
  control_plane
  step "the MPIJob CRD on the manager"
  kctl apply --server-side -f "$REPO/config/crd/bases/" >/dev/null
  kctl wait --for condition=Established --timeout=60s -f "$REPO/config/crd/bases/" >/dev/null
  "$REPO/hack/kueue/up.sh"
  worker_secret
  operator_process "$OPERATOR_METRICS_ADDR" "$OPERATOR_HEALTH_ADDR"
  step "MultiKueue's manager up; KUBECONFIG=$DIR/admin.conf; logs in $LOGS"
}

main "$@"
