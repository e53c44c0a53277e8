#!/usr/bin/env bash
# Stops the local cluster that up.sh started and undoes what it did to the
# machine: its processes and containers, mounts, network namespaces, the
# bridge and the sysctls kubelet changed. The cluster's data (etcd, PKI)
# stays for a fast restart unless --purge is given.
#
# usage: hack/cluster/down.sh [--purge]
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/cluster/lib.sh
. "$here/lib.sh"

stop() {
  local name=$1 pid
  pid=$(cat "$DIR/pids/$name" 2>/dev/null) || return 0
  if kill -0 "$pid" 2>/dev/null; then
    echo ">> stopping $name" >&2
    kill "$pid"
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null
  fi
  rm -f "$DIR/pids/$name"
}

stop kubelet
if running containerd; then
  echo ">> killing containers" >&2
  for id in $(ctr tasks ls -q 2>/dev/null); do ctr tasks kill -s SIGKILL "$id" >/dev/null 2>&1; done
  sleep 1
fi
stop containerd
pkill -KILL -f -- "containerd-shim.*-address $CONTAINERD_SOCK" 2>/dev/null
for name in coredns kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$name"; done

# Mounts under the cluster's directory (volumes, rootfs), deepest first.
awk -v d="$DIR/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
  umount "$m" 2>/dev/null || umount -l "$m"
done
for ns in $(ip netns list 2>/dev/null | awk '/^cni-/ {print $1}'); do ip netns delete "$ns"; done
ip link delete "$BRIDGE" 2>/dev/null
if [ -f "$DIR/sysctls.saved" ]; then
  while IFS= read -r kv; do sysctl -q -w "$kv" >/dev/null; done < "$DIR/sysctls.saved"
  rm -f "$DIR/sysctls.saved"
fi
rm -rf "$DIR/cni-ipam" "$DIR/containerd/state"
if [ "${1:-}" = --purge ]; then
  rm -rf "$DIR"
fi
echo ">> cluster stopped" >&2
