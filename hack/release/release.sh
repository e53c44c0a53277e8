#!/usr/bin/env bash
# make release: everything a release publishes, written to dist/.
#
#   install.yaml                      CRD, RBAC, Deployment, PDB, Service (config/default)
#   mpi-operator-X.Y.Z.tgz            the chart, for helm push oci://...
#   image/                            the operator image, linux/amd64 + linux/arm64, OCI layout
#   image.txt                         its reference by tag and digest
#   kubectl-mpi_vX.Y.Z_OS_ARCH.tar.gz the plugin for linux and darwin, amd64 and arm64
#   checksums.txt                     sha256 of the archives, the chart and install.yaml
#   mpi.yaml                          the krew manifest, with the archives' sha256
#
# usage: hack/release/release.sh [VERSION]   VERSION must be internal/version's
# env:   DIST      output folder (default dist)
# The image is built by ko from a base pinned by digest (hack/release/base.sh);
# building twice gives the same digest.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
version=$(hack/version.sh)
if [ -n "${1:-}" ] && [ "$1" != "$version" ]; then
  echo "VERSION=$1 but internal/version/version.go says $version: change it there, run make manifests, commit, then release" >&2
  exit 1
fi
chart_version=$(sed -n 's/^version: //p' charts/mpi-operator/Chart.yaml)
[ "$chart_version" = "${version#v}" ] || { echo "charts/mpi-operator/Chart.yaml has version $chart_version, not ${version#v}: run make manifests" >&2; exit 1; }
DIST=${DIST:-$repo/dist}
IMAGE=$(sed -n 's/^const Image = "\(.*\)"$/\1/p' internal/version/version.go)
URL=https://github.com/mpi-operator/mpi-operator/releases/download/$version

log() { echo ">> [$(date +%T)] $*" >&2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/mpi-operator-release.XXXXXX")
registry_pid=""
cleanup() { [ -z "$registry_pid" ] || kill "$registry_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
rm -rf "$DIST"
mkdir -p "$DIST"

log "install.yaml (kubectl kustomize config/default)"
kubectl=$(hack/build-k8s.sh kubectl)/kubectl
{ printf '# mpi-operator %s: kubectl apply --server-side -f %s/install.yaml\n' "$version" "$URL"
  "$kubectl" kustomize config/default; } > "$DIST/install.yaml"

log "chart (helm package)"
helm=$(hack/build-helm.sh)
"$helm" package charts/mpi-operator -d "$DIST" >/dev/null

log "operator image (ko, linux/amd64 + linux/arm64)"
# The base is served from a registry of the build's own, always at the same
# name: ko records the base's name in the image (an annotation), so another
# name would give another digest.
REGISTRY=localhost:15080
curl -sf "http://$REGISTRY/v2/" >/dev/null 2>&1 && { echo "something already listens on $REGISTRY: another make release?" >&2; exit 1; }
"$(hack/imagetool/registry-bin.sh)" -addr 127.0.0.1:15080 -dir "$work/registry" > "$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 50); do curl -sf "http://$REGISTRY/v2/" >/dev/null && break; sleep 0.1; done
base=$(hack/release/base.sh "$REGISTRY")
ko=$(hack/release/tool.sh ko)
# ko pushes nothing here: the layout under dist/ is what a release
# publishes (.github/workflows/release.yaml) and what e2e pulls.
# ko parses the layout's path as a repository name, which refuses
# capitals (a clone under mktemp's /tmp/tmp.AbC...): it writes to a path of
# digits and lower case, and the layout moves to dist/ after.
layout=/tmp/mpi-operator-release-$$
rm -rf "$layout"
KO_DOCKER_REPO=$IMAGE KO_DEFAULTBASEIMAGE=$base KO_CONFIG_PATH=$here GOFLAGS=-trimpath \
  "$ko" build ./cmd/mpi-operator --bare --push=false --oci-layout-path "$layout" \
  --platform linux/amd64,linux/arm64 --tags "$version" --sbom none > "$work/ko.out" 2> "$work/ko.log" \
  || { cat "$work/ko.log" >&2; rm -rf "$layout"; exit 1; }
mv "$layout" "$DIST/image"
digest=$(sed -n 's/.*"digest": *"\(sha256:[0-9a-f]*\)".*/\1/p' "$DIST/image/index.json" | head -1)
echo "$IMAGE:$version@$digest" > "$DIST/image.txt"
echo "base $base" >> "$work/ko.log"

log "kubectl-mpi archives"
# The four are built at once: each is mostly a link and a gzip, one core
# each, and the builds share nothing but Go's build cache.
archive() {
  local os=$1 arch=$2 d=$work/kubectl-mpi-$1-$2
  mkdir -p "$d"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "-s -w" -o "$d/kubectl-mpi" ./cmd/kubectl-mpi
  cp LICENSE "$d/LICENSE"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$d" -cf - kubectl-mpi LICENSE \
    | gzip -n -9 > "$DIST/kubectl-mpi_${version}_${os}_${arch}.tar.gz"
}
pids=()
for os in linux darwin; do
  for arch in amd64 arm64; do
    archive "$os" "$arch" &
    pids+=("$!")
  done
done
for pid in "${pids[@]}"; do wait "$pid"; done
(cd "$DIST" && sha256sum kubectl-mpi_*.tar.gz install.yaml mpi-operator-*.tgz > checksums.txt)

log "krew manifest"
hack/release/krew.sh "$version" "$URL" "$DIST/checksums.txt" > "$DIST/mpi.yaml"

log "dist/: $(cd "$DIST" && ls | tr '\n' ' ')"
log "image $(cat "$DIST/image.txt")"
