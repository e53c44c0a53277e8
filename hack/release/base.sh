#!/usr/bin/env bash
# Builds the operator image's base and pushes it to a registry: what
# distroless/static holds (a nonroot user 65532, /tmp, CA certificates,
# time zones, /etc/services), made from Debian's packages since no outside
# registry can be reached to pull a base. One layer serves linux/amd64 and
# linux/arm64 (the packages are arch "all"), so the base is an index of
# both. The layer is byte for byte the same for the same package versions
# (sorted entries, fixed times and owners), and so is the digest.
#
# usage: hack/release/base.sh REGISTRY    (a plain-http registry, host:port)
# prints REGISTRY/mpi-operator/base@sha256:... on stdout.
set -euo pipefail

registry=$1
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${MPI_OPERATOR_CACHE:-$HOME/.cache/mpi-operator}/images
crane=$("$here/tool.sh" crane)
PACKAGES=(ca-certificates netbase tzdata)
mkdir -p "$cache"

log() { echo ">> $*" >&2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/mpi-operator-base.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The packages' current versions name the layer in the cache.
[ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v lock)" ] || apt-get update -qq >&2
versions=$(for p in "${PACKAGES[@]}"; do apt-cache policy "$p" | awk -v p="$p" '/Candidate:/ {print p "=" $2}'; done)
key=$( { echo "$versions"; cat "$0"; } | sha256sum | cut -c1-12)
layer=$cache/base-$key.tar
if [ ! -f "$layer" ]; then
  log "base layer from Debian's $(echo "$versions" | tr '\n' ' ')"
  (cd "$work" && apt-get download $versions >&2)
  r=$work/root
  install -d -m 0755 "$r/etc" "$r/var/lib/dpkg/status.d" "$r/etc/ssl/certs"
  install -d -m 1777 "$r/tmp"
  install -d -m 0700 "$r/root"
  install -d -m 0700 -o 65532 -g 65532 "$r/home/nonroot"
  for deb in "$work"/*.deb; do
    dpkg-deb -x "$deb" "$r"
    name=$(dpkg-deb -f "$deb" Package)
    # Where scanners look for what a distroless image holds.
    dpkg-deb -f "$deb" > "$r/var/lib/dpkg/status.d/$name"
  done
  # update-ca-certificates' bundle, without running the package's scripts.
  find "$r/usr/share/ca-certificates/mozilla" -name '*.crt' | LC_ALL=C sort | xargs cat > "$r/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' > "$r/etc/group"
  printf 'hosts: files dns\n' > "$r/etc/nsswitch.conf"
  rm -rf "$r/usr/share/man" "$r/usr/sbin" "$r/etc/ca-certificates.conf" "$r/usr/share/doc"/*/changelog*
  tar --sort=name --mtime=@0 --numeric-owner --format=gnu -C "$r" -cf "$layer.tmp" .
  mv "$layer.tmp" "$layer"
fi

ref=$registry/mpi-operator/base
for arch in amd64 arm64; do
  "$crane" append --oci-empty-base -f "$layer" -t "$ref:$arch" >/dev/null 2>"$work/crane.log" || { cat "$work/crane.log" >&2; exit 1; }
  "$crane" mutate "$ref:$arch" --set-platform "linux/$arch" --user 65532:65532 \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt -t "$ref:$arch" >/dev/null 2>"$work/crane.log" || { cat "$work/crane.log" >&2; exit 1; }
done
"$crane" index append -m "$ref:amd64" -m "$ref:arm64" -t "$ref:index" >/dev/null 2>"$work/crane.log" || { cat "$work/crane.log" >&2; exit 1; }
echo "$ref@$("$crane" digest "$ref:index")"
