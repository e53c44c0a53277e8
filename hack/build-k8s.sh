#!/usr/bin/env bash
# Builds the Kubernetes control-plane binaries (and etcd) from the Go module
# proxy, because no release download is reachable from these machines. The
# binaries land in a cache outside the clone, keyed by version, so a fresh
# clone (CI) reuses what an earlier run built and a new machine rebuilds it.
#
# usage: hack/build-k8s.sh [component...]   (default: kube-apiserver etcd)
# components: kube-apiserver kube-controller-manager kube-scheduler kubelet
# kubectl kubeadm (k8s.io/kubernetes), etcd, coredns, kwok.
# prints the bin directory on stdout; progress goes to stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
K8S_VERSION=$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$here/k8s/go.mod")
ETCD_VERSION=$(awk '$1=="require" && $2=="go.etcd.io/etcd/server/v3" {print $3}' "$here/etcd/go.mod")
COREDNS_VERSION=$(awk '$1=="require" && $2=="github.com/coredns/coredns" {print $3}' "$here/coredns/go.mod")
# kwok installs as it is (no replace directives); its Stage files come
# from its module and land beside it in kwok-stages/.
KWOK_VERSION=v0.8.0
cache=${MPI_OPERATOR_CACHE:-$HOME/.cache/mpi-operator}
bin="$cache/k8s-$K8S_VERSION-etcd-$ETCD_VERSION/bin"
mkdir -p "$bin"

components=("$@")
[ ${#components[@]} -gt 0 ] || components=(kube-apiserver etcd)

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

for c in "${components[@]}"; do
  # The directory is keyed by the Kubernetes and etcd versions; coredns
  # carries its version in a stamp file beside it.
  want=$K8S_VERSION
  [ "$c" = coredns ] && want=$COREDNS_VERSION
  [ "$c" = kwok ] && want=$KWOK_VERSION
  if [ -x "$bin/$c" ] && [ "$(cat "$bin/.$c.version" 2>/dev/null || echo "$K8S_VERSION")" = "$want" ]; then
    continue
  fi
  start=$SECONDS
  echo ">> building $c from the Go module proxy (once per machine and version)" >&2
  if [ "$c" = etcd ]; then
    (cd "$here/etcd" && go build -trimpath -ldflags "-s -w" -o "$bin/.$c.tmp" go.etcd.io/etcd/server/v3)
  elif [ "$c" = coredns ]; then
    (cd "$here/coredns" && go build -trimpath -ldflags "-s -w" -o "$bin/.$c.tmp" github.com/coredns/coredns)
    echo "$want" > "$bin/.$c.version"
  elif [ "$c" = kwok ]; then
    tmpbin=$(mktemp -d)
    GOBIN=$tmpbin go install "sigs.k8s.io/kwok/cmd/kwok@$want"
    mv "$tmpbin/kwok" "$bin/.$c.tmp"
    rm -rf "$tmpbin" "$bin/kwok-stages"
    stages=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$want/kustomize/stage
    mkdir -p "$bin/kwok-stages"
    cp "$stages/node/fast/node-initialize.yaml" "$stages/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
      "$stages/pod/fast/pod-ready.yaml" "$stages/pod/fast/pod-delete.yaml" "$bin/kwok-stages/"
    echo "$want" > "$bin/.$c.version"
  else
    (cd "$here/k8s" && go build -trimpath -ldflags "$ldflags" -o "$bin/.$c.tmp" "k8s.io/kubernetes/cmd/$c")
  fi
  mv "$bin/.$c.tmp" "$bin/$c"
  echo ">> built $c in $((SECONDS - start))s" >&2
done
echo "$bin"
