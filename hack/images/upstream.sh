#!/usr/bin/env bash
# Builds kubeflow/mpi-operator's own images from its own Dockerfiles, as its
# Makefile does (test_images: base, then openmpi, openmpi-builder, mpich,
# mpich-builder with BASE_LABEL, then the pi example), without Docker:
# buildah (Debian's) runs the Dockerfiles in chroot isolation, FROM
# debian:trixie being a debootstrap minbase root filesystem loaded into its
# storage. The Dockerfiles come from upstream's module in the Go module
# cache.
#
# usage: hack/images/upstream.sh [--push HOST:PORT]
# prints buildah's storage that holds the images on stdout (progress on
# stderr); with --push, pushes them to that plain-http registry under their
# Docker Hub paths (mpioperator/mpi-pi:openmpi, ...).
# The storage is cached under ~/.cache/mpi-operator/images, keyed by a hash
# of everything it is built from.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${MPI_OPERATOR_CACHE:-$HOME/.cache/mpi-operator}
mkdir -p "$cache/images" "$cache/bin"
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# The release pinned for upstream's binary (hack/upstream/go.mod): images,
# manifests and binary all come from the same one.
UPSTREAM_VERSION=$(awk '$1=="require" && $2=="github.com/kubeflow/mpi-operator" {print $3}' "$here/../upstream/go.mod")
# Upstream's Makefile labels its base images with the release version.
BASE_LABEL=$UPSTREAM_VERSION
# The images the manifests of examples/v2beta1/pi name, and what they are
# built from.
IMAGES=(
  "mpioperator/base:$BASE_LABEL build/base Dockerfile"
  "mpioperator/openmpi:$BASE_LABEL build/base openmpi.Dockerfile"
  "mpioperator/openmpi-builder:$BASE_LABEL build/base openmpi-builder.Dockerfile"
  "mpioperator/mpich:$BASE_LABEL build/base mpich.Dockerfile"
  "mpioperator/mpich-builder:$BASE_LABEL build/base mpich-builder.Dockerfile"
  "mpioperator/mpi-pi:openmpi examples/v2beta1/pi Dockerfile"
  "mpioperator/mpi-pi:mpich examples/v2beta1/pi mpich.Dockerfile"
)

log() { echo ">> [$(date +%T)] $*" >&2; }

push=""
if [ "${1:-}" = --push ]; then push=$2; fi

upstream=$(cd "$here" && go mod download -json "github.com/kubeflow/mpi-operator@$UPSTREAM_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -d "$upstream/build/base" ] || { echo "upstream module not found ($upstream)" >&2; exit 1; }

command -v buildah >/dev/null || { log "installing buildah from Debian"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah >&2; }
tool_key=$(buildah --version | cut -d' ' -f3)

# debian:trixie as Docker Hub's is: debootstrap minbase, plus what the
# official image's build (debuerreotype) adds so that apt in a container
# behaves: services never start (policy-rc.d), no caches or lists kept.
debian_rootfs() {
  local suite=$1 key out
  key=$(printf '%s %s\n' "$suite" "$MIRROR" | cat - <(declare -f debian_rootfs) | sha256sum | cut -c1-12)
  out=$cache/images/debian-$suite-$key.tar
  if [ -f "$out" ]; then echo "$out"; return; fi
  local start=$SECONDS work; work=$(mktemp -d "${TMPDIR:-/tmp}/debian-$suite.XXXXXX")
  log "debootstrap --variant=minbase $suite (FROM debian:$suite)"
  debootstrap --variant=minbase "$suite" "$work/rootfs" "$MIRROR" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; rm -rf "$work"; return 1; }
  local r=$work/rootfs
  printf '#!/bin/sh\nexit 101\n' > "$r/usr/sbin/policy-rc.d" && chmod 0755 "$r/usr/sbin/policy-rc.d"
  printf 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };\nAPT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };\nDir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n' \
    > "$r/etc/apt/apt.conf.d/docker-clean"
  printf 'Acquire::Languages "none";\n' > "$r/etc/apt/apt.conf.d/docker-no-languages"
  printf 'Apt::AutoRemove::SuggestsImportant "false";\n' > "$r/etc/apt/apt.conf.d/docker-autoremove-suggests"
  rm -f "$r/etc/apt/sources.list"
  local keyring=/usr/share/keyrings/debian-archive-keyring.pgp
  [ -e "$r$keyring" ] || keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  cat > "$r/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $suite $suite-updates
Components: main
Signed-By: $keyring

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: $suite-security
Components: main
Signed-By: $keyring
EOF
  # What a container runtime provides, not the image.
  rm -rf "${r:?}"/dev/* "$r"/proc/* "$r"/sys/* "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin "$r"/var/cache/apt/archives/*.deb \
    "$r"/var/log/bootstrap.log "$r"/var/log/dpkg.log "$r"/var/log/apt/* "$r"/tmp/* "$r"/root/.bash_history
  : > "$r/etc/resolv.conf"; : > "$r/etc/hostname"; : > "$r/etc/hosts"
  tar --numeric-owner --xattrs --xattrs-include='*' -C "$r" -cf "$out.tmp" .
  mv "$out.tmp" "$out"
  rm -rf "$work"
  log "debian:$suite root filesystem in $((SECONDS - start))s"
  echo "$out"
}

base=$(debian_rootfs trixie)
key=$( { echo "$tool_key $base $BASE_LABEL ${IMAGES[*]}"; cat "$0";
         cd "$upstream" && find build/base examples/v2beta1/pi -type f | sort | xargs cat; } | sha256sum | cut -c1-12)
store=$cache/images/upstream-$UPSTREAM_VERSION-$key
bh() { buildah --root "$store/root" --runroot "$store/run" --storage-driver overlay "$@"; }
if [ ! -f "$store/.done" ]; then
  # A build cut short leaves working containers: buildah removes them
  # (and their mounts) before the folder goes.
  [ ! -d "$store" ] || bh rm --all >/dev/null 2>&1 || true
  rm -rf "$store"
  start=$SECONDS
  work=$(mktemp -d "${TMPDIR:-/tmp}/upstream-images.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # debian:trixie, as Docker Hub would serve it, from the root filesystem.
  "$("$here/../release/tool.sh" crane)" append --oci-empty-base -f "$base" -t debian:trixie -o "$work/debian.tar" 2>/dev/null
  bh pull -q "docker-archive:$work/debian.tar" >/dev/null
  bh tag localhost/debian:trixie docker.io/library/debian:trixie
  # The module cache keeps files read-only and without execute bits (a
  # module zip has no modes): the contexts get git's modes back, 0644, and
  # 0755 for scripts, as a clone of upstream's repository has them.
  cp -r "$upstream/build" "$upstream/examples" "$work/"
  find "$work/build" "$work/examples" -type d -exec chmod 0755 {} + -o -type f -exec chmod 0644 {} +
  grep -rl '^#!' "$work/build" "$work/examples" | xargs -r chmod 0755
  for spec in "${IMAGES[@]}"; do
    read -r ref dir file <<< "$spec"
    log "building $ref from upstream's $dir/$file"
    s=$SECONDS
    bh build -q --isolation chroot --pull=false --layers=false -t "$ref" -f "$work/$dir/$file" \
      --build-arg "BASE_LABEL=$BASE_LABEL" --build-arg port=2222 "$work/$dir" >&2
    log "built $ref in $((SECONDS - s))s"
  done
  touch "$store/.done"
  log "upstream images built in $((SECONDS - start))s"
fi

if [ -n "$push" ]; then
  for spec in "${IMAGES[@]}"; do
    ref=${spec%% *}
    bh push -q --tls-verify=false "$ref" "docker://$push/$ref" >&2
  done
fi
echo "$store"
