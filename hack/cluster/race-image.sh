#!/usr/bin/env bash
# Publishes the operator built with Go's race detector to the local
# cluster's mirror, under the release image's tag with "-race" appended:
# the release's image (dist/, hack/release/release.sh) with its binary
# replaced. make test-e2e-race runs the end-to-end suite on it, and a race
# any operator Pod reports fails the suite (test/e2e/races_test.go).
#
# -race needs cgo, and the release image holds no C library: the binary
# is linked statically against glibc (the netgo and osusergo tags keep
# name and user lookups in Go, which static glibc cannot do).
#
# usage: hack/cluster/race-image.sh   (after hack/cluster/up.sh)
# prints the image as Pods name it, by tag and digest, so a node that
# pulled an earlier build under the same tag pulls this one.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

log() { echo ">> $*" >&2; }

crane=$("$REPO/hack/release/tool.sh" crane)
[ -f "$REPO/dist/image.txt" ] || { echo "no dist/image.txt: run hack/cluster/up.sh (it runs make release) first" >&2; exit 1; }
release=$(cat "$REPO/dist/image.txt")
tag=${release%@*}-race
work=$(mktemp -d "${TMPDIR:-/tmp}/mpi-operator-race.XXXXXX")
trap 'rm -rf "$work"' EXIT

log "operator built with -race, linked statically"
mkdir -p "$work/root/ko-app"
(cd "$REPO" && CGO_ENABLED=1 go build -race -trimpath -tags netgo,osusergo \
  -ldflags '-linkmode=external -extldflags=-static' -o "$work/root/ko-app/mpi-operator" ./cmd/mpi-operator)
tar --sort=name --mtime=@0 --numeric-owner --owner=0 --group=0 -C "$work/root" -cf "$work/layer.tar" ko-app

log "pushed to $MIRROR_ADDR as $tag"
base=$MIRROR_ADDR/${release#ghcr.io/}
"$crane" append --platform linux/amd64 -b "$base" -f "$work/layer.tar" -t "$MIRROR_ADDR/${tag#ghcr.io/}" >/dev/null 2>"$work/crane.log" \
  || { cat "$work/crane.log" >&2; exit 1; }
echo "$tag@$("$crane" digest "$MIRROR_ADDR/${tag#ghcr.io/}")"
