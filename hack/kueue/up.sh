#!/usr/bin/env bash
# Starts Kueue (sigs.k8s.io/kueue, built from the Go module proxy) as a
# process of this machine against the local cluster (hack/cluster/up.sh),
# with its kubeflow.org/mpijob integration: its CRDs from its module, a
# self-signed serving certificate for 127.0.0.1, its MPIJob and
# kueue.x-k8s.io webhooks registered with the API server by URL, and its
# configuration. Idempotent: a running Kueue with the same configuration
# is left running.
#
# usage: hack/kueue/up.sh        (the cluster must be up)
# stop:  hack/kueue/down.sh      (hack/cluster/down.sh runs it too)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/cluster/lib.sh
. "$here/../cluster/lib.sh"
# shellcheck source=hack/cluster/steps.sh
. "$here/../cluster/steps.sh"
# shellcheck source=hack/kueue/lib.sh
. "$here/lib.sh"

build_kueue() {
  [ -x "$KUEUE_BIN" ] && return
  step "building Kueue $KUEUE_VERSION from the Go module proxy (once per machine, ~5 min)"
  local tmp; tmp=$(mktemp -d)
  (cd / && GOWORK=off GOFLAGS= GOBIN=$tmp go install "sigs.k8s.io/kueue/cmd/kueue@$KUEUE_VERSION")
  mkdir -p "$(dirname "$KUEUE_BIN")"
  mv "$tmp/kueue" "$KUEUE_BIN"
  rm -rf "$tmp"
}

install_crds() {
  step "Kueue's CRDs"
  kctl apply --server-side --force-conflicts -f "$MODULE/config/components/crd/bases/" >/dev/null
  kctl wait --for condition=Established --timeout=60s -f "$MODULE/config/components/crd/bases/" >/dev/null
}

# certificates writes the serving certificate (and its CA) and the webhook
# configurations that trust it, and lays out the overlay that shows the
# certificate at /etc/kueue/metrics/certs to Kueue alone.
certificates() {
  mkdir -p "$KUEUE_DIR"
  (cd "$REPO" && go run ./hack/kueue/localwebhooks -dir "$KUEUE_DIR/certs" \
    -manifests "$MODULE/config/components/webhook/manifests.yaml" -addr "$KUEUE_WEBHOOK_ADDR") > "$KUEUE_DIR/webhooks.yaml.tmp"
  mv "$KUEUE_DIR/webhooks.yaml.tmp" "$KUEUE_DIR/webhooks.yaml"
  local metrics=$KUEUE_DIR/etc/kueue/metrics/certs
  mkdir -p "$metrics"
  cp "$KUEUE_DIR/certs/tls.crt" "$KUEUE_DIR/certs/tls.key" "$metrics/"
}

configure() {
  cat > "$KUEUE_DIR/config.yaml.new" <<EOC
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: $KUEUE_HEALTH_ADDR
metrics:
  bindAddress: $KUEUE_METRICS_ADDR
webhook:
  host: ${KUEUE_WEBHOOK_ADDR%:*}
  port: ${KUEUE_WEBHOOK_ADDR##*:}
  certDir: $KUEUE_DIR/certs
# One process: nothing to elect, and no Service, Secret or cert-manager
# for its certificates (certificates() makes them).
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
# The visibility API server would need an APIService routed to this
# process; the e2e tests read Workloads instead.
featureGates:
  VisibilityOnDemand: false
integrations:
  frameworks: ["kubeflow.org/mpijob"]
EOC
  replace_config kueue "$KUEUE_DIR/config.yaml"
}

# kueue_ready fails at once if the process is gone, so that wait_for does
# not wait out its tries on a Kueue that exited.
kueue_ready() {
  running kueue || { echo "Kueue exited; its log:" >&3; tail -n 20 "$LOGS/kueue.log" >&3; exit 1; }
  curl -sf "http://$KUEUE_HEALTH_ADDR/readyz"
}

# webhooks_answer: the API server reaches Kueue's webhooks (TLS with the
# caBundle, by URL) for Kueue's own kinds and for MPIJobs.
webhooks_answer() {
  kctl create --dry-run=server -o name -f - <<EOC
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: kueue-up-check}
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: kueue-up-check, namespace: default}
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers: [{name: launcher, image: none}]
EOC
}

main() {
  exec 3>&2 # kueue_ready's message, past wait_for's redirections
  kctl get --raw /readyz >/dev/null 2>&1 || { echo "the local cluster is not up: run hack/cluster/up.sh first" >&2; exit 1; }
  mkdir -p "$DIR/pids" "$LOGS"
  build_kueue
  MODULE=$(kueue_module_dir)
  [ -d "$MODULE" ] || { echo "Kueue's module $KUEUE_VERSION not found in the module cache" >&2; exit 1; }
  install_crds
  certificates
  configure
  command -v unshare >/dev/null || { echo "unshare (util-linux) is needed" >&2; exit 1; }
  start kueue unshare -m --propagation private "$here/run.sh" "$KUEUE_DIR/etc" \
    "$KUEUE_BIN" --config "$KUEUE_DIR/config.yaml" 3>&-
  wait_for "Kueue /readyz on $KUEUE_HEALTH_ADDR" 120 kueue_ready
  step "registering Kueue's webhooks at https://$KUEUE_WEBHOOK_ADDR"
  kctl apply --server-side --force-conflicts -f "$KUEUE_DIR/webhooks.yaml" >/dev/null
  wait_for "Kueue's webhooks to answer the API server" 60 webhooks_answer
  step "Kueue $KUEUE_VERSION up; log in $LOGS/kueue.log"
}

main "$@"
