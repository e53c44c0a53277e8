# The steps of up.sh, as functions, shared with the benchmark cluster
# (hack/bench/up.sh). Sourced after lib.sh.

step() { echo ">> [$(date +%T)] $*" >&2; }

install_packages() {
  local missing=()
  for p in containerd runc containernetworking-plugins iptables debootstrap curl; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    step "installing ${missing[*]} from Debian"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  fi
}

# build_binaries [component...]: the binaries of the cluster, linked at $DIR/bin.
build_binaries() {
  step "control-plane binaries (built once from the Go module proxy, ~10 min cold)"
  local components=("$@")
  [ ${#components[@]} -gt 0 ] || components=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl kubeadm coredns)
  BIN=$("$REPO/hack/build-k8s.sh" "${components[@]}")
  ln -sfn "$BIN" "$DIR/bin"
}

pki() {
  [ -f "$DIR/admin.conf" ] && return
  step "certificates and kubeconfigs (kubeadm phases)"
  mkdir -p "$DIR/pki"
  cat > "$DIR/kubeadm.yaml" <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: ${KUBEADM_ADDRESS:-$NODE_IP}
  bindPort: 6443
nodeRegistration:
  name: $NODE_NAME
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: $("$DIR/bin/kubectl" version --client -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p')
clusterName: mpi-operator
certificatesDir: $DIR/pki
controlPlaneEndpoint: ${KUBEADM_ADDRESS:-$NODE_IP}:6443
networking:
  serviceSubnet: $SERVICE_CIDR
  podSubnet: $POD_CIDR
  dnsDomain: $CLUSTER_DOMAIN
apiServer:
  certSANs: [127.0.0.1, $NODE_IP]
EOF
  "$DIR/bin/kubeadm" init phase certs all --config "$DIR/kubeadm.yaml" >"$LOGS/kubeadm.log" 2>&1
  "$DIR/bin/kubeadm" init phase kubeconfig all --config "$DIR/kubeadm.yaml" --kubeconfig-dir "$DIR" >>"$LOGS/kubeadm.log" 2>&1
  # kubeadm refuses a loopback address; a loopback cluster (the benchmark's)
  # gives it a stand-in and points the kubeconfigs at the real one.
  if [ -n "${KUBEADM_ADDRESS:-}" ]; then
    sed -i "s#https://$KUBEADM_ADDRESS:6443#https://$NODE_IP:6443#" "$DIR"/*.conf
  fi
}

network() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    step "bridge $BRIDGE $NODE_IP/24"
    ip link add "$BRIDGE" type bridge
    # The CNI bridge plugin insists on gateway/subnet as the bridge address.
    ip addr add "$NODE_IP/24" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  # The one Service IP Pods use, the API server's (what kube-proxy would
  # do for it; the cluster runs no kube-proxy): an operator installed from
  # the release's manifests, unchanged, reaches the API server.
  local dnat=(PREROUTING -i "$BRIDGE" -d "$KUBERNETES_SERVICE_IP" -p tcp --dport 443 -j DNAT --to-destination "$NODE_IP:6443")
  iptables -t nat -C "${dnat[@]}" 2>/dev/null || iptables -t nat -A "${dnat[@]}"
  mkdir -p "$DIR/cni" "$DIR/cni-ipam"
  cat > "$DIR/cni/10-mpi-operator.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "mpi-operator",
  "plugins": [{
    "type": "bridge",
    "bridge": "$BRIDGE",
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "dataDir": "$DIR/cni-ipam",
      "ranges": [[{"subnet": "$POD_SUBNET", "gateway": "$NODE_IP"}]],
      "routes": [{"dst": "0.0.0.0/0"}]
    }
  }, {"type": "portmap", "capabilities": {"portMappings": true}}]
}
EOF
}

# start NAME CMD...: runs CMD in the background with its log under $LOGS,
# unless the process of NAME's pid file still runs.
start() {
  local name=$1; shift
  if running "$name"; then return; fi
  step "starting $name"
  nohup "$@" >"$LOGS/$name.log" 2>&1 &
  echo $! > "$DIR/pids/$name"
}

# replace_config NAME FILE: moves FILE.new over FILE and, when that changed
# the file, stops NAME so that start runs it again with the new one.
replace_config() {
  local name=$1 file=$2
  if ! cmp -s "$file.new" "$file"; then
    mv "$file.new" "$file"
    if running "$name"; then
      step "restarting $name for its new configuration"
      kill "$(cat "$DIR/pids/$name")"
      for _ in $(seq 20); do running "$name" || break; sleep 0.5; done
    fi
  else
    rm -f "$file.new"
  fi
}

wait_for() {
  local what=$1 tries=$2; shift 2
  for _ in $(seq "$tries"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  echo "timed out waiting for $what; logs in $LOGS" >&2
  return 1
}

# APISERVER_EXTRA_ARGS and CONTROLLER_MANAGER_EXTRA_ARGS hold more flags of
# kube-apiserver and kube-controller-manager, split on spaces: the
# benchmark cluster's audit log and its simulated nodes (hack/bench/up.sh).
# Kubernetes' own gang scheduling (the Workload API, scheduling.k8s.io
# v1alpha3, and kube-scheduler's GangScheduling plugin) is beta and off by
# default in 1.37; the local cluster turns it on so that the operator's
# --gang-scheduling=kubernetes can be proven on a real scheduler.
FEATURE_GATES=GenericWorkload=true
control_plane() {
  start etcd "$DIR/bin/etcd" --data-dir "$DIR/etcd" --name node \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "node=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls ""
  local p=$DIR/pki
  # shellcheck disable=SC2086 # APISERVER_EXTRA_ARGS is meant to split
  start kube-apiserver "$DIR/bin/kube-apiserver" \
    --advertise-address "$NODE_IP" --bind-address "$NODE_IP" --secure-port 6443 \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --client-ca-file "$p/ca.crt" --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP \
    --service-account-issuer "https://kubernetes.default.svc.$CLUSTER_DOMAIN" \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC \
    --enable-admission-plugins NodeRestriction --allow-privileged=true \
    --endpoint-reconciler-type none \
    --requestheader-client-ca-file "$p/front-proxy-ca.crt" \
    --proxy-client-cert-file "$p/front-proxy-client.crt" --proxy-client-key-file "$p/front-proxy-client.key" \
    --requestheader-allowed-names front-proxy-client --requestheader-extra-headers-prefix X-Remote-Extra- \
    --requestheader-group-headers X-Remote-Group --requestheader-username-headers X-Remote-User \
    --feature-gates "$FEATURE_GATES" --runtime-config scheduling.k8s.io/v1alpha3=true,scheduling.k8s.io/v1beta1=true \
    ${APISERVER_EXTRA_ARGS:-}
  wait_for "kube-apiserver /readyz" 60 "$DIR/bin/kubectl" --kubeconfig "$DIR/super-admin.conf" get --raw /readyz
  # What kubeadm init would do: admin.conf's group gets cluster-admin, and
  # the apiserver may read logs from the kubelet.
  local sa=("$DIR/bin/kubectl" --kubeconfig "$DIR/super-admin.conf")
  { "${sa[@]}" create clusterrolebinding kubeadm:cluster-admins --clusterrole=cluster-admin \
      --group=kubeadm:cluster-admins --dry-run=client -o yaml
    echo ---
    "${sa[@]}" create clusterrolebinding kube-apiserver-kubelet-client --clusterrole=system:kubelet-api-admin \
      --user=kube-apiserver-kubelet-client --dry-run=client -o yaml
  } | "${sa[@]}" apply -f - >/dev/null
  # shellcheck disable=SC2086 # CONTROLLER_MANAGER_EXTRA_ARGS is meant to split
  start kube-controller-manager "$DIR/bin/kube-controller-manager" --feature-gates "$FEATURE_GATES" \
    --kubeconfig "$DIR/controller-manager.conf" \
    --authentication-kubeconfig "$DIR/controller-manager.conf" --authorization-kubeconfig "$DIR/controller-manager.conf" \
    --bind-address 127.0.0.1 --secure-port "$CONTROLLER_MANAGER_PORT" --leader-elect=false --use-service-account-credentials=true \
    --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
    --root-ca-file "$p/ca.crt" --service-account-private-key-file "$p/sa.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --allocate-node-cidrs=false ${CONTROLLER_MANAGER_EXTRA_ARGS:-}
  start kube-scheduler "$DIR/bin/kube-scheduler" --feature-gates "$FEATURE_GATES" --kubeconfig "$DIR/scheduler.conf" \
    --authentication-kubeconfig "$DIR/scheduler.conf" --authorization-kubeconfig "$DIR/scheduler.conf" \
    --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false
}

# registry_up starts the loopback registry and pushes upstream's images
# (built once by hack/images/upstream.sh from upstream's Dockerfiles) to it.
# The registry keeps manifests in memory: after a start they are pushed
# again, their blobs being on disk already.
registry_up() {
  local bin; bin=$("$REPO/hack/imagetool/registry-bin.sh")
  start registry "$bin" -addr "$MIRROR_ADDR" -dir "$DIR/registry"
  wait_for registry 30 curl -sf "http://$MIRROR_ADDR/v2/"
  step "upstream's images (built once from its Dockerfiles, ~10 min cold), pushed to $MIRROR_ADDR"
  UPSTREAM_STORE=$("$REPO/hack/images/upstream.sh" --push "$MIRROR_ADDR")
}

# containerd_up N: node N's containerd, docker.io mirrored to the registry.
containerd_up() {
  node_vars "$1"
  local d=$N_DIR/containerd runc_root=""
  [ "$1" = 1 ] || runc_root="Root = \"$N_DIR/runc\""
  # docker.io for upstream's images, ghcr.io for the operator's release.
  local registry server
  for registry in docker.io=https://registry-1.docker.io ghcr.io=https://ghcr.io; do
    server=${registry#*=} registry=${registry%%=*}
    mkdir -p "$d/certs.d/$registry"
    cat > "$d/certs.d/$registry/hosts.toml" <<EOF
server = "$server"

[host."http://$MIRROR_ADDR"]
  capabilities = ["pull", "resolve"]
EOF
  done
  cat > "$d/config.toml.new" <<EOF
version = 2
root = "$d/root"
state = "$d/state"
[grpc]
  address = "$N_SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$REGISTRY/pause:e2e"
  # This machine's root lacks CAP_SYS_RESOURCE: without this no sandbox starts.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        $runc_root
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$DIR/cni"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$d/certs.d"
EOF
  replace_config "containerd$N_SUFFIX" "$d/config.toml"
  start "containerd$N_SUFFIX" containerd --config "$d/config.toml"
  wait_for "containerd$N_SUFFIX" 30 ctr_on "$N_SOCK" version
}

# import_images loads the project's own images (mpi-operator.local/...,
# never pulled) into every node's containerd.
import_images() {
  step "images (built once: Debian root filesystems and static Go binaries)"
  local imgs; imgs=$("$REPO/hack/images/build.sh" pause "${CLUSTER_IMAGES[@]}")
  local n img
  for n in "${NODES[@]}"; do
    node_vars "$n"
    for img in $imgs; do
      local ref; ref=$(tar -xOf "$img" manifest.json | sed -n 's/.*"RepoTags":\["\([^"]*\)".*/\1/p')
      local digest; digest=$(tar -xOf "$img" manifest.json | sha256sum | cut -c1-16)
      if [ "$(cat "$N_DIR/images/$(basename "$ref")" 2>/dev/null)" != "$digest" ] || ! ctr_on "$N_SOCK" images ls -q | grep -qx "$ref"; then
        step "importing $ref into $N_NAME"
        ctr_on "$N_SOCK" images import "$img" >/dev/null
        mkdir -p "$N_DIR/images"
        echo "$digest" > "$N_DIR/images/$(basename "$ref")"
      fi
    done
    # Pods pull upstream's images (IfNotPresent for pi.yaml): a node must
    # not keep running an older build of them after a rebuild.
    if [ "$(cat "$N_DIR/images/upstream" 2>/dev/null)" != "$UPSTREAM_STORE" ]; then
      local old; old=$(ctr_on "$N_SOCK" images ls -q | grep '^docker.io/mpioperator/' || true)
      if [ -n "$old" ]; then
        step "removing $N_NAME's pulls of upstream's previous images"
        # shellcheck disable=SC2086 # one reference per word
        ctr_on "$N_SOCK" images rm $old >/dev/null
      fi
      mkdir -p "$N_DIR/images"
      echo "$UPSTREAM_STORE" > "$N_DIR/images/upstream"
    fi
  done
}

# kubelet_up N: node N's kubelet. Nodes after the first get their own
# client certificate (the NodeRestriction admission plugin lets a kubelet
# write only its own Node), ports, root and pod log directories, and a
# cgroup root of their own.
kubelet_up() {
  node_vars "$1"
  save_sysctls
  local extra=""
  if [ "$1" != 1 ]; then
    mkdir -p "$N_DIR"
    if [ ! -f "$N_DIR/kubelet.conf" ]; then
      "$DIR/bin/kubeadm" kubeconfig user --config "$DIR/kubeadm.yaml" --client-name "system:node:$N_NAME" \
        --org system:nodes > "$N_DIR/kubelet.conf.tmp" 2>>"$LOGS/kubeadm.log"
      mv "$N_DIR/kubelet.conf.tmp" "$N_DIR/kubelet.conf"
    fi
    cgroup_root "$N_CGROUP"
    extra="port: $N_PORT
healthzPort: $N_HEALTHZ
cgroupRoot: $N_CGROUP
podLogsDir: $N_DIR/pod-logs"
  fi
  cat > "$N_DIR/kubelet.yaml.new" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
readOnlyPort: 0
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
clusterDNS: [$NODE_IP]
clusterDomain: $CLUSTER_DOMAIN
containerRuntimeEndpoint: unix://$N_SOCK
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $DIR/pki/ca.crt}
authorization: {mode: Webhook}
# The project's own images were imported, not pulled: they can never be
# pulled again.
imageGCHighThresholdPercent: 100
# ConfigMap updates (hostfile after a scale) reach Pods within a sync.
syncFrequency: 10s
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
resolvConf: $DIR/resolv.conf
$extra
EOF
  replace_config "kubelet$N_SUFFIX" "$N_DIR/kubelet.yaml"
  # Pods resolve through the cluster DNS only; the host's search list and
  # resolvers are not theirs.
  : > "$DIR/resolv.conf"
  local started=""
  running "kubelet$N_SUFFIX" || started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  [ -z "$started" ] || KUBELET_STARTED=$started
  start "kubelet$N_SUFFIX" "$DIR/bin/kubelet" --config "$N_DIR/kubelet.yaml" --kubeconfig "$N_DIR/kubelet.conf" \
    --node-ip "$NODE_IP" --hostname-override "$N_NAME" --root-dir "$N_DIR/kubelet" --cert-dir "$N_DIR/kubelet/pki"
  step "waiting for node $N_NAME to be Ready"
  wait_for "node $N_NAME Ready" 120 node_ready "$N_NAME" "$started"
}

# cgroup_root PATH creates a kubelet's cgroup root in every cgroup v1
# hierarchy (the kubelet checks that it exists), with the machine's CPUs
# and memory nodes in cpuset.
cgroup_root() {
  local h
  for h in /sys/fs/cgroup/*/; do
    [ -f "${h}cgroup.procs" ] || continue
    [ "$(basename "$h")" = unified ] && continue
    mkdir -p "${h%/}$1"
    if [ -f "${h}cpuset.cpus" ]; then
      [ -n "$(cat "${h%/}$1/cpuset.cpus")" ] || cat "${h}cpuset.cpus" > "${h%/}$1/cpuset.cpus"
      [ -n "$(cat "${h%/}$1/cpuset.mems")" ] || cat "${h}cpuset.mems" > "${h%/}$1/cpuset.mems"
    fi
  done
}

# node_ready NAME STARTED: Ready, untainted, and (after a kubelet start at
# STARTED) reported by this kubelet, not left over from the previous one.
node_ready() {
  local ready
  ready=$(kctl get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}')
  [ "${ready%% *}" = True ] && [[ ! "${ready#* }" < "$2" ]] &&
    ! kctl get node "$1" -o jsonpath='{.spec.taints}' | grep -q not-ready
}

# dns_up serves the cluster's names, and answers NXDOMAIN for any other, as
# a cluster's upstream resolver would. The names of the namespace dns-cache
# are cached as kubeadm's Corefile did before Kubernetes 1.32, and many
# clusters still do: an answer, NXDOMAIN too, is kept for 30 s (the e2e
# test of the launcher's wait runs there). With no upstream, CoreDNS answered
# SERVFAIL: a resolver takes that for a failing server, not a missing
# name, and CoreDNS logged an error for each bare-name try of a search
# list (552 in one e2e run, mostly AAAA).
dns_up() {
  cat > "$DIR/Corefile.new" <<EOF
$CLUSTER_DOMAIN:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $NODE_IP
    errors
    health $NODE_IP:8180
    ready $NODE_IP:8181
    kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
        kubeconfig $DIR/admin.conf
        pods insecure
    }
}
dns-cache.svc.$CLUSTER_DOMAIN:53 {
    bind $NODE_IP
    errors
    kubernetes $CLUSTER_DOMAIN {
        kubeconfig $DIR/admin.conf
        pods insecure
        ttl 30
    }
    cache 30
}
.:53 {
    bind $NODE_IP
    errors
    template ANY ANY {
        rcode NXDOMAIN
    }
}
EOF
  replace_config coredns "$DIR/Corefile"
  start coredns "$DIR/bin/coredns" -conf "$DIR/Corefile"
  wait_for "CoreDNS ready" 60 curl -sf "http://$NODE_IP:8181/ready"
}

# forget_stopped_kueue removes the webhooks of a Kueue (hack/kueue/up.sh)
# that is no longer running, say after the machine restarted: they would
# make the API server refuse every MPIJob create.
forget_stopped_kueue() {
  running kueue && return
  kctl delete mutatingwebhookconfigurations,validatingwebhookconfigurations \
    -l mpi-operator.kubeflow.org/local-kueue --ignore-not-found >/dev/null
}

# deploy_operator installs the operator as a user installs a release:
# make release's dist/ (hack/release/release.sh), its image pushed to the
# mirror under the path ghcr.io would serve it at, and its packaged chart
# installed with helm (hack/deploy.sh), with the local cluster's values
# (hack/cluster/operator-values.yaml). Nodes forget an earlier build of the
# same tag, so the release's image is the one pulled.
deploy_operator() {
  step "the release: dist/ (make release)"
  "$REPO/hack/release/release.sh"
  local image; image=$(cat "$REPO/dist/image.txt")
  local tag=${image%@*} digest=${image#*@}
  "$("$REPO/hack/release/tool.sh" crane)" push "$REPO/dist/image" "$MIRROR_ADDR/${tag#ghcr.io/}" >/dev/null 2>&1
  local n changed=""
  for n in "${NODES[@]}"; do
    node_vars "$n"
    local have; have=$(ctr_on "$N_SOCK" images ls | awk -v r="$tag" '$1 == r {print $3}')
    if [ -n "$have" ] && [ "$have" != "$digest" ]; then
      step "$N_NAME forgets its pull of an earlier $tag"
      ctr_on "$N_SOCK" images rm "$tag" >/dev/null
      changed=1
    fi
  done
  step "helm (built once from the Go module proxy, a few minutes cold)"
  local helm; helm=$("$REPO/hack/build-helm.sh")
  local chart; chart=$(ls "$REPO"/dist/mpi-operator-*.tgz)
  step "installing the release's chart $(basename "$chart") ($tag)"
  HELM=$helm KUBECTL="$DIR/bin/kubectl" KUBECONFIG="$DIR/admin.conf" WAIT=0 CHART=$chart \
    HELM_ARGS="-f $REPO/hack/cluster/operator-values.yaml" "$REPO/hack/deploy.sh" install
  # A new kubelet has lost the old Pod's container, whatever its stale
  # status says; a new build of the same tag needs a new rollout.
  if [ -n "$changed" ] || [ -n "$KUBELET_STARTED" ]; then
    kctl -n mpi-operator rollout restart deployment/mpi-operator >/dev/null
  fi
  kctl -n mpi-operator rollout status deployment/mpi-operator --timeout=120s >&2
}

# check_dns proves a Pod of a headless Service resolves from a Pod, the way
# a launcher resolves its workers.
check_dns() {
  step "checking cluster DNS from a Pod"
  kctl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: cluster-check}
---
apiVersion: v1
kind: Service
metadata: {name: dns, namespace: cluster-check}
spec: {clusterIP: None, publishNotReadyAddresses: true, selector: {app: dns}}
EOF
  kctl -n cluster-check delete pod dns --ignore-not-found --wait >/dev/null
  kctl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: dns, namespace: cluster-check, labels: {app: dns}}
spec:
  hostname: dns
  subdomain: dns
  restartPolicy: Never
  containers:
  - name: check
    image: $REGISTRY/${CLUSTER_IMAGES[0]}:e2e
    imagePullPolicy: Never
    command: [sh, -c, "for i in \$(seq 30); do getent hosts dns.dns.cluster-check.svc.$CLUSTER_DOMAIN && exit 0; sleep 1; done; exit 1"]
EOF
  wait_for "DNS check Pod" 90 pod_succeeded
  kctl -n cluster-check logs dns >&2
  kctl delete namespace cluster-check --wait=false >/dev/null
}

pod_succeeded() {
  local phase; phase=$(kctl -n cluster-check get pod dns -o jsonpath='{.status.phase}')
  [ "$phase" = Failed ] && { kctl -n cluster-check logs dns >&2; exit 1; }
  [ "$phase" = Succeeded ]
}


# operator_process METRICS_ADDR HEALTH_ADDR builds this operator from the
# working tree and runs it as a process against the cluster of $DIR, as
# its Deployment runs it on a cluster with nodes (a cluster of none, or of
# kwok's, has nowhere to run its Pod). A new build restarts it.
operator_process() {
  (cd "$REPO" && go build -o "$DIR/mpi-operator.new" ./cmd/mpi-operator)
  if ! cmp -s "$DIR/mpi-operator.new" "$DIR/mpi-operator"; then
    mv "$DIR/mpi-operator.new" "$DIR/mpi-operator"
    stop mpi-operator
  else
    rm -f "$DIR/mpi-operator.new"
  fi
  start mpi-operator "$DIR/mpi-operator" --kubeconfig "$DIR/admin.conf" --leader-elect=false \
    --metrics-bind-address "$1" --health-probe-bind-address "$2"
  wait_for "the operator's /readyz on $2" 60 curl -sf "http://$2/readyz"
}
