#!/usr/bin/env bash
# The release version, kept in internal/version/version.go alone.
#
# usage: hack/version.sh          prints it (v0.1.0)
#        hack/version.sh stamp    writes it into the chart (version,
#                                 appVersion) and config/manager's image tag
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
v=$(sed -n 's/^var Version = "\(v[^"]*\)"$/\1/p' "$repo/internal/version/version.go")
[[ $v =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "no semantic version in internal/version/version.go: '$v'" >&2; exit 1; }
case ${1:-} in
  "") echo "$v" ;;
  stamp)
    # The chart's own version is the release's without the v (Helm wants
    # SemVer); appVersion is the image tag.
    sed -i -E "s/^version: .*/version: ${v#v}/; s/^appVersion: .*/appVersion: \"$v\"/" "$repo/charts/mpi-operator/Chart.yaml"
    sed -i -E "s/^(  newTag: ).*/\1$v/" "$repo/config/manager/kustomization.yaml"
    ;;
  *) echo "usage: $0 [stamp]" >&2; exit 2 ;;
esac
