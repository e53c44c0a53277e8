#!/usr/bin/env bash
# Runs Kueue inside the private mount namespace that up.sh gives it
# (unshare -m --propagation private). With its internal certificate
# management off, Kueue reads its metrics certificate from the fixed path
# /etc/kueue/metrics/certs. A read-only overlay puts LAYER over /etc for
# this process alone: the machine's /etc is never written to, and the
# mount goes away with the process.
#
# usage: run.sh LAYER KUEUE ARGS...
set -euo pipefail
layer=$1; shift
mount -t overlay overlay -o "lowerdir=$layer:/etc" /etc
exec "$@"
