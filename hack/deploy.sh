#!/usr/bin/env bash
# Installs the operator into the cluster of the current kubeconfig context
# (make deploy / make undeploy), and the local cluster's operator
# (hack/cluster/steps.sh) the same way.
#
# usage: hack/deploy.sh install [IMAGE]    IMAGE: registry/mpi-operator:tag
#        hack/deploy.sh uninstall
# env:   HELM       a helm v4 binary (for its server-side apply flags);
#                   default: helm on PATH. With none, config/default is
#                   applied with kubectl.
#        HELM_ARGS  more arguments for helm upgrade --install (-f values.yaml)
#        CHART      the chart: a packaged one (dist/mpi-operator-X.Y.Z.tgz)
#                   or a folder (default charts/mpi-operator)
#        KUBECTL    default kubectl
#        NAMESPACE  default mpi-operator (helm only: config/default's is
#                   mpi-operator; an overlay with namespace: moves it)
#        WAIT       0: do not wait for the rollout (default 1)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
KUBECTL=${KUBECTL:-kubectl}
HELM=${HELM:-$(command -v helm || true)}
NAMESPACE=${NAMESPACE:-mpi-operator}
RELEASE=mpi-operator
CHART=${CHART:-$repo/charts/mpi-operator}

install_helm() {
  local image=$1 args=()
  if [ -n "$image" ]; then
    args+=(--set-string "image.repository=${image%:*}" --set-string "image.tag=${image##*:}")
  fi
  # Helm installs crds/ on a first install only and never upgrades it:
  # the CRD is applied first, so a newer chart's schema reaches the API.
  if [ -d "$CHART" ]; then
    "$KUBECTL" apply --server-side --force-conflicts -f "$CHART/crds/" >/dev/null
  else
    tar -xzOf "$CHART" mpi-operator/crds/kubeflow.org_mpijobs.yaml | "$KUBECTL" apply --server-side --force-conflicts -f - >/dev/null
  fi
  # --take-ownership adopts objects an earlier kubectl install made;
  # --force-conflicts takes their fields from kubectl's field manager.
  # shellcheck disable=SC2086 # HELM_ARGS is a list of arguments
  "$HELM" upgrade --install "$RELEASE" "$CHART" -n "$NAMESPACE" --create-namespace \
    --take-ownership --server-side=true --force-conflicts "${args[@]}" ${HELM_ARGS:-} >/dev/null
}

# overlay is install_kubectl's throwaway kustomization, removed on exit.
overlay=""
trap '[ -z "$overlay" ] || rm -rf "$overlay"' EXIT

install_kubectl() {
  local image=$1 dir=$repo/config/default
  if [ -n "$image" ]; then
    # kustomize's images: transformer, in a throwaway overlay inside the
    # repository (kustomize loads other kustomizations by relative path).
    overlay=$(mktemp -d "$repo/.deploy-XXXXXX")
    printf 'resources:\n- ../config/default\nimages:\n- name: ghcr.io/mpi-operator/mpi-operator\n  newName: %s\n  newTag: %s\n' \
      "${image%:*}" "${image##*:}" > "$overlay/kustomization.yaml"
    dir=$overlay
  fi
  "$KUBECTL" apply --server-side --force-conflicts -k "$dir" >/dev/null
}

case ${1:-} in
  install)
    if [ -n "$HELM" ]; then
      echo ">> installing the chart ${CHART#"$repo"/} as release $RELEASE in namespace $NAMESPACE ($HELM)" >&2
      install_helm "${2:-}"
    else
      echo ">> installing config/default with $KUBECTL (no helm on PATH)" >&2
      NAMESPACE=mpi-operator
      install_kubectl "${2:-}"
    fi
    if [ "${WAIT:-1}" != 0 ]; then
      "$KUBECTL" -n "$NAMESPACE" rollout status deployment/mpi-operator --timeout=180s >&2
    fi
    ;;
  uninstall)
    if [ -n "$HELM" ] && "$HELM" status "$RELEASE" -n "$NAMESPACE" >/dev/null 2>&1; then
      "$HELM" uninstall "$RELEASE" -n "$NAMESPACE" --wait >&2
    fi
    # What helm leaves (its crds/, the namespace) and a kubectl install;
    # deleting the CRD deletes every MPIJob, and their children with them.
    "$KUBECTL" delete --ignore-not-found -k "$repo/config/default" >&2
    ;;
  *)
    sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//;/^set -e/d' >&2
    exit 2
    ;;
esac
