#!/usr/bin/env bash
# Stops MultiKueue's manager cluster (hack/multikueue/up.sh): its Kueue
# first, which deletes the queued jobs and Kueue's objects while it still
# runs, so that MultiKueue removes their copies from the worker; then the
# operator and the control plane. The worker's ServiceAccount and role
# stay while the local cluster runs. --purge also removes the manager's
# data.
#
# usage: hack/multikueue/down.sh [--purge]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/multikueue/lib.sh
. "$here/lib.sh"
if running kube-apiserver; then "$here/../kueue/down.sh"; fi
for name in mpi-operator kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$name"; done
[ "${1:-}" = --purge ] && rm -rf "$DIR"
echo ">> MultiKueue's manager stopped" >&2
