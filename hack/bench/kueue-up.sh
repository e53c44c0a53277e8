#!/usr/bin/env bash
# Kueue (hack/kueue/up.sh, on ports of its own) and this operator, as
# processes against the benchmark cluster (hack/bench/up.sh), for
# Topology Aware Scheduling on kwok nodes labelled by block, rack and
# host. hack/bench/down.sh stops both. Idempotent.
#
# usage: hack/bench/kueue-up.sh   (the benchmark cluster must be up)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/bench/lib.sh
. "$here/lib.sh"
# shellcheck source=hack/cluster/steps.sh
. "$here/../cluster/steps.sh"
"$here/../kueue/up.sh"
operator_process 127.0.0.1:18092 127.0.0.1:18093
step "Kueue and the operator up on the benchmark cluster; KUBECONFIG=$DIR/admin.conf"
