#!/usr/bin/env bash
# Stops the Kueue that hack/kueue/up.sh started and undoes what it
# registered: the jobs, queues and flavors go first, while Kueue still
# runs to remove their finalizers; then its webhooks, so that no MPIJob
# create waits on a process that is gone; then the process (its /etc
# overlay lives in its own mount namespace and goes with it). Kueue's CRDs
# and certificates stay for a fast restart unless --purge is given.
# Idempotent; run by hack/cluster/down.sh while the API server is up.
#
# usage: hack/kueue/down.sh [--purge]
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/cluster/lib.sh
. "$here/../cluster/lib.sh"
# shellcheck source=hack/cluster/steps.sh
. "$here/../cluster/steps.sh"
# shellcheck source=hack/kueue/lib.sh
. "$here/lib.sh"

# delete_kueue_objects deletes every object of Kueue's kinds, and the
# MPIJobs it queues, waiting until they are gone.
delete_kueue_objects() {
  step "deleting queued MPIJobs and Kueue's objects while Kueue runs"
  kctl delete mpijobs.kubeflow.org -A -l kueue.x-k8s.io/queue-name --ignore-not-found --timeout=60s >/dev/null
  local kind
  for kind in "${KUEUE_KINDS[@]}"; do
    kctl delete "$kind.kueue.x-k8s.io" -A --all --ignore-not-found --timeout=60s >/dev/null
  done
}

# drop_kueue_objects deletes what is left of Kueue's objects (none after
# delete_kueue_objects, unless Kueue died), removing the finalizers no
# running process will ever remove. Its webhooks must be gone first: they
# would refuse the edits.
drop_kueue_objects() {
  local kind obj
  kctl delete mpijobs.kubeflow.org -A -l kueue.x-k8s.io/queue-name --ignore-not-found --wait=false >/dev/null
  for kind in "${KUEUE_KINDS[@]}"; do
    kctl delete "$kind.kueue.x-k8s.io" -A --all --ignore-not-found --wait=false >/dev/null
    kctl get "$kind.kueue.x-k8s.io" -A -o go-template='{{range .items}}{{if .metadata.finalizers}}{{with .metadata.namespace}}{{.}}{{end}}/{{.metadata.name}}{{"\n"}}{{end}}{{end}}' 2>/dev/null |
      while IFS= read -r obj; do
        [ -n "$obj" ] || continue
        echo ">> Kueue is not running: removing the finalizers of $kind $obj" >&2
        local ns=${obj%%/*} name=${obj#*/}
        kctl patch "$kind.kueue.x-k8s.io" "$name" ${ns:+-n "$ns"} --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null
      done
  done
}

delete_webhooks() {
  kctl delete mutatingwebhookconfigurations,validatingwebhookconfigurations -l "$KUEUE_WEBHOOK_LABEL" \
    --ignore-not-found >/dev/null
}

main() {
  if kctl get --raw /readyz >/dev/null 2>&1; then
    if running kueue && kueue_installed; then delete_kueue_objects; fi
    delete_webhooks
    # Whatever Kueue could not finish (or a Kueue that died left).
    if kueue_installed; then drop_kueue_objects; fi
    if [ "${1:-}" = --purge ] && kueue_installed; then
      step "deleting Kueue's CRDs"
      kctl delete --ignore-not-found -f "$(kueue_module_dir)/config/components/crd/bases/" >/dev/null
    fi
  elif running kueue; then
    echo ">> the API server is down: Kueue's objects and webhooks stay registered" >&2
  fi
  stop kueue
  # The overlay was mounted in Kueue's own namespace; should it ever show
  # in the machine's (run.sh started without unshare), it goes too.
  if awk -v layer="lowerdir=$KUEUE_DIR/etc:" '$2 == "/etc" && index($4, layer) {found=1} END {exit !found}' /proc/mounts; then
    echo ">> unmounting Kueue's overlay from the machine's /etc" >&2
    umount /etc
  fi
  if [ "${1:-}" = --purge ]; then rm -rf "$KUEUE_DIR"; fi
  echo ">> Kueue stopped" >&2
}

main "$@"
