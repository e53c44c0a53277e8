#!/usr/bin/env bash
# Builds the project's container images without a Docker engine or a
# registry: Debian root filesystems from debootstrap (MPI images) or a
# static Go binary (pause), packed by hack/imagetool into image
# tarballs that `ctr images import` takes.
#
# usage: hack/images/build.sh NAME...   NAME: openmpi openmpi5 mpich pause
# prints the tarball of each image on stdout; progress goes to stderr.
# Tarballs are cached under ~/.cache/mpi-operator/images, keyed by a hash of
# what they are built from, so a rebuild happens only when that changes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${MPI_OPERATOR_CACHE:-$HOME/.cache/mpi-operator}/images
mkdir -p "$cache"
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
REGISTRY=mpi-operator.local

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpi-operator-images.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

log() { echo ">> $*" >&2; }

imagetool() {
  local bin="$cache/../bin/imagetool"
  if [ ! -x "$bin" ] || [ "$here/../imagetool/main.go" -nt "$bin" ]; then
    mkdir -p "$(dirname "$bin")"
    (cd "$here/../imagetool" && go build -o "$bin" .)
  fi
  "$bin" "$@"
}

hash_of() { cat "$@" | sha256sum | cut -c1-12; }

# mpi_image NAME SUITE PACKAGES: a Debian root filesystem with an MPI
# implementation, sshd for root (port 22) and for mpiuser (port 2222), both
# with the job's key as host key, ssh checking host keys, and
# the test programs /opt/mpi/pi and /opt/mpi/ranks.
mpi_image() {
  local name=$1 suite=$2 pkgs=$3 cc=${4:-mpicc}
  local key out
  key=$(printf '%s %s %s %s' "$name" "$suite" "$pkgs" "$cc" | cat - "$0" "$here"/files/* | sha256sum | cut -c1-12)
  out="$cache/$name-$key.tar"
  if [ -f "$out" ]; then echo "$out"; return; fi
  command -v debootstrap >/dev/null || { log "installing debootstrap"; apt-get install -y -qq debootstrap >&2; }
  local work=$tmp/$name
  mkdir -p "$work"
  local start=$SECONDS
  log "debootstrap $suite for image $name (a few minutes the first time)"
  debootstrap --variant=minbase --include="$pkgs" "$suite" "$work/rootfs" "$MIRROR" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; return 1; }
  local r=$work/rootfs
  install -d "$r/opt/mpi" "$r/run/sshd" "$r/etc/ssh/sshd_config.d" "$r/etc/ssh/ssh_config.d"
  cp "$here/files/pi.c" "$here/files/ranks.c" "$r/opt/mpi/"
  chroot "$r" sh -c "cd /opt/mpi && $cc -O2 -o pi pi.c && $cc -O2 -o ranks ranks.c"
  chroot "$r" useradd -m -u 1000 -s /bin/bash mpiuser
  # No host keys of the image's own: every container of it would share
  # them. sshd presents the job's key, which the launcher's known_hosts
  # pins (root's here; mpiuser's in sshd_config.nonroot).
  rm -f "$r"/etc/ssh/ssh_host_*
  printf 'PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nStrictModes no\nHostKey /root/.ssh/id_rsa\n' \
    > "$r/etc/ssh/sshd_config.d/mpi.conf"
  install -m 0644 -o 1000 -g 1000 "$here/files/sshd_config.nonroot" "$r/home/mpiuser/.sshd_config"
  install -m 0644 "$here/files/ssh_config" "$r/etc/ssh/ssh_config.d/mpi.conf"
  rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* "$r"/usr/share/doc/* "$r"/usr/share/man/*
  tar --numeric-owner -C "$r" -cf "$work/rootfs.tar" .
  imagetool -layer "$work/rootfs.tar" -tag "$REGISTRY/$name:e2e" -out "$out.tmp" \
    -env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    -env OMPI_ALLOW_RUN_AS_ROOT=1 -env OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    -cmd /usr/sbin/sshd,-De
  mv "$out.tmp" "$out"
  log "built image $name in $((SECONDS - start))s"
  echo "$out"
}

# go_image NAME PACKAGE ARGS...: a single static Go binary as /NAME.
go_image() {
  local name=$1 dir=$2 pkg=$3; shift 3
  local work=$tmp/$name
  mkdir -p "$work/root"
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/root/$name" "$pkg")
  local key; key=$(hash_of "$work/root/$name")
  local out="$cache/$name-$key.tar"
  if [ ! -f "$out" ]; then
    tar --numeric-owner --owner=0 --group=0 -C "$work/root" -cf "$work/layer.tar" .
    imagetool -layer "$work/layer.tar" -tag "$REGISTRY/$name:e2e" -out "$out.tmp" -entrypoint "/$name" "$@"
    mv "$out.tmp" "$out"
    log "built image $name"
  fi
  echo "$out"
}

for name in "$@"; do
  case $name in
    openmpi) mpi_image openmpi bookworm openmpi-bin,libopenmpi-dev,automake,openssh-server,openssh-client,gcc,libc6-dev ;;
    # (libltdl-dev, pulled in by the -dev packages, fails to configure
    # without automake.) trixie's gcc is gcc-14.
    # MPICH comes from trixie (4.2): bookworm's 4.0 over UCX hangs in
    # MPI_Finalize about one run in ten: a rank enters the PMI barrier
    # while its peer still waits on it to finish their UCX disconnect
    # (fixed upstream by pmodels/mpich#6596).
    mpich) mpi_image mpich trixie mpich,libmpich-dev,automake,openssh-server,openssh-client,gcc-14,libc6-dev "MPICH_CC=gcc-14 mpicc" ;;
    openmpi5) mpi_image openmpi5 trixie openmpi-bin,libopenmpi-dev,automake,openssh-server,openssh-client,gcc-14,libc6-dev "OMPI_CC=gcc-14 mpicc" ;;
    pause) go_image pause "$here/../imagetool" ./pause ;;
    *) echo "unknown image $name" >&2; exit 2 ;;
  esac
done
