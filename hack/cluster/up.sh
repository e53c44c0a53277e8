#!/usr/bin/env bash
# Starts a two-node Kubernetes cluster on this machine, built from the Go
# module proxy and Debian's packages: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, per node a kubelet with its own
# containerd + runc, one CNI bridge for both, CoreDNS, and a loopback
# registry that mirrors docker.io with upstream's images. Idempotent: what
# runs already is left running, what is built already is reused. Nothing
# leaves the machine: the apiserver reaches the kubelets by IP, and DNS
# answers only for the cluster.
#
# usage: hack/cluster/up.sh        then: export KUBECONFIG=$(hack/cluster/kubeconfig.sh)
# stop:  hack/cluster/down.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/cluster/lib.sh
. "$here/lib.sh"
# shellcheck source=hack/cluster/steps.sh
. "$here/steps.sh"

# A node whose kubelet stops answering is NotReady after 20 s, not the
# default 50 s: an e2e test of a lost node waits for it. The kubelets renew
# their Lease every 10 s, so one late renewal still falls within it.
CONTROLLER_MANAGER_EXTRA_ARGS="${CONTROLLER_MANAGER_EXTRA_ARGS:-} --node-monitor-grace-period=20s"

UPSTREAM_STORE=""
KUBELET_STARTED=""

main() {
  local start_s=$SECONDS
  mkdir -p "$DIR/pids" "$LOGS"
  install_packages
  build_binaries
  pki
  network
  control_plane
  forget_stopped_kueue
  registry_up
  local n
  for n in "${NODES[@]}"; do containerd_up "$n"; done
  import_images
  dns_up
  for n in "${NODES[@]}"; do kubelet_up "$n"; done
  deploy_operator
  check_dns
  step "cluster up in $((SECONDS - start_s))s; KUBECONFIG=$DIR/admin.conf; logs in $LOGS"
}

main "$@"
