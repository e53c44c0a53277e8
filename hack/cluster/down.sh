#!/usr/bin/env bash
# Stops the local cluster that up.sh started and undoes what it did to the
# machine: its processes (both nodes' kubelets and containerds, the
# registry) and containers, mounts, network namespaces, cgroups, the
# bridge and the sysctls kubelet changed. The cluster's data (etcd, PKI)
# stays for a fast restart unless --purge is given.
#
# usage: hack/cluster/down.sh [--purge]
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/cluster/lib.sh
. "$here/lib.sh"

# MultiKueue's manager (hack/multikueue/up.sh) has this cluster as its
# worker, and Kueue (hack/kueue/up.sh) needs the API server to clean up
# after itself: they go first, while the control plane still runs.
"$REPO/hack/multikueue/down.sh"
if running kube-apiserver; then "$REPO/hack/kueue/down.sh"; fi

for n in "${NODES[@]}"; do node_vars "$n"; stop "kubelet$N_SUFFIX"; done
for n in "${NODES[@]}"; do
  node_vars "$n"
  if running "containerd$N_SUFFIX"; then
    echo ">> killing containers of $N_NAME" >&2
    for id in $(ctr_on "$N_SOCK" tasks ls -q 2>/dev/null); do ctr_on "$N_SOCK" tasks kill -s SIGKILL "$id" >/dev/null 2>&1; done
    sleep 1
  fi
  stop "containerd$N_SUFFIX"
  pkill -KILL -f -- "containerd-shim.*-address $N_SOCK" 2>/dev/null
done
for name in registry coredns kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$name"; done

# Mounts under the cluster's directory (volumes, rootfs), deepest first.
awk -v d="$DIR/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
  umount "$m" 2>/dev/null || umount -l "$m"
done
for ns in $(ip netns list 2>/dev/null | awk '/^cni-/ {print $1}'); do ip netns delete "$ns"; done
ip link delete "$BRIDGE" 2>/dev/null
dnat=(PREROUTING -i "$BRIDGE" -d "$KUBERNETES_SERVICE_IP" -p tcp --dport 443 -j DNAT --to-destination "$NODE_IP:6443")
while iptables -t nat -D "${dnat[@]}" 2>/dev/null; do :; done
if [ -f "$DIR/sysctls.saved" ]; then
  while IFS= read -r kv; do sysctl -q -w "$kv" >/dev/null; done < "$DIR/sysctls.saved"
  rm -f "$DIR/sysctls.saved"
fi
rm -rf "$DIR/cni-ipam" "$DIR/containerd/state"
# What the other nodes made outside $DIR: their kubelets' cgroup roots
# (empty now that their containers are gone) and the links to their Pods'
# logs in /var/log/containers; inside it, runc and containerd state.
for n in "${NODES[@]}"; do
  [ "$n" = 1 ] && continue
  node_vars "$n"
  for h in /sys/fs/cgroup/*/; do
    [ -d "${h%/}$N_CGROUP" ] && find "${h%/}$N_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  find /var/log/containers -maxdepth 1 -type l -lname "$N_DIR/*" -delete 2>/dev/null
  rm -rf "$N_DIR/containerd/state" "$N_DIR/runc"
done
if [ "${1:-}" = --purge ]; then
  rm -rf "$DIR"
fi
echo ">> cluster stopped" >&2
