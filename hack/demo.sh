#!/usr/bin/env bash
# make demo: README.md, docs/development.md. From a bare machine it builds
# and starts the local cluster (cached after the first run), runs
# upstream's pi example (examples/v2beta1/pi/pi.yaml: Open MPI, 2 workers,
# its public image pulled through the cluster's docker.io mirror), prints
# the launcher's output and the job's conditions, and exits 0 only if the
# job succeeded.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# One local image, for up.sh's DNS check; pi.yaml pulls upstream's.
export MPI_IMAGES=${MPI_IMAGES:-openmpi}
# shellcheck source=hack/cluster/lib.sh
. "$here/cluster/lib.sh"

start=$SECONDS
"$here/cluster/up.sh"
ns=demo
kctl create namespace "$ns" --dry-run=client -o yaml | kctl apply -f - >/dev/null
kctl -n "$ns" delete mpijob pi --ignore-not-found --wait >/dev/null
echo ">> [$(date +%T)] applying examples/v2beta1/pi/pi.yaml"
applied=$SECONDS
kctl -n "$ns" apply -f "$REPO/examples/v2beta1/pi/pi.yaml" >/dev/null

last=""
state=""
for _ in $(seq 300); do
  state=$(kctl -n "$ns" get mpijob pi -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}')
  if [ "$state" != "$last" ]; then
    echo ">> [$(date +%T)] +$((SECONDS - applied))s conditions: ${state:-none}"
    last=$state
  fi
  case " $state " in *" Succeeded "*|*" Failed "*) break ;; esac
  sleep 1
done

echo ">> launcher output:"
kctl -n "$ns" logs "job/pi-launcher" 2>/dev/null || true
echo ">> conditions:"
kctl -n "$ns" get mpijob pi -o jsonpath='{range .status.conditions[*]}{.type}{"\t"}{.status}{"\t"}{.reason}{"\t"}{.message}{"\n"}{end}'
echo ">> demo took $((SECONDS - start))s (job: $((SECONDS - applied))s from apply)"
case " $state " in *" Succeeded "*) exit 0 ;; esac
exit 1
