# Tools are pinned in hack/tools/<tool>/go.mod (one module each, so their
# dependencies never meet) and built from it into bin/ (the Go
# build cache makes a rebuild in a fresh clone a matter of seconds), so a
# fresh machine needs nothing but Go.
BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen
GOLANGCI_LINT := $(BIN)/golangci-lint
CRD_REF_DOCS := $(BIN)/crd-ref-docs
ACTIONLINT := $(BIN)/actionlint

.PHONY: all
all: generate manifests metricsdoc refdocs build

$(CONTROLLER_GEN): hack/tools/controller-gen/go.mod
	cd hack/tools/controller-gen && go build -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(GOLANGCI_LINT): hack/tools/golangci-lint/go.mod
	cd hack/tools/golangci-lint && go build -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

$(CRD_REF_DOCS): hack/tools/crd-ref-docs/go.mod
	cd hack/tools/crd-ref-docs && go build -o $@ github.com/elastic/crd-ref-docs

$(ACTIONLINT): hack/tools/actionlint/go.mod
	cd hack/tools/actionlint && go build -o $@ github.com/rhysd/actionlint/cmd/actionlint

.PHONY: generate
generate: $(CONTROLLER_GEN) ## deepcopy functions of the API types
	$(CONTROLLER_GEN) object paths=./api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## CRD and RBAC under config/
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/... output:crd:artifacts:config=config/crd/bases
	go run ./hack/crdmeta config/crd/bases/kubeflow.org_mpijobs.yaml
	$(CONTROLLER_GEN) rbac:roleName=mpi-operator paths=./internal/... output:rbac:artifacts:config=config/rbac
	hack/gang-crds.sh $(CONTROLLER_GEN) test/integration/gang/testdata/crds
	hack/version.sh stamp
	$(MAKE) chart-sync

# The chart carries copies of the generated CRD (Helm installs crds/ before
# the templates) and RBAC (its templates read the rules from files/), since
# Helm reads nothing outside the chart's folder.
.PHONY: chart-sync
chart-sync:
	cp config/crd/bases/kubeflow.org_mpijobs.yaml charts/mpi-operator/crds/
	cp config/rbac/role.yaml charts/mpi-operator/files/role.yaml

# docs/metrics.md lists the metrics the operator registers, read from the
# collectors themselves (hack/metricsdoc).
.PHONY: metricsdoc
metricsdoc: ## docs/metrics.md from the registered metrics
	go run ./hack/metricsdoc -out docs/metrics.md

# docs/reference/api.md is crd-ref-docs' markdown with the templates of
# hack/refdocs/templates: its own drop the CEL rules, which the CRD
# enforces and users meet as rejections. docs/reference/configuration.md
# lists the flags the built binary prints for -help and the chart's values
# with their comments (hack/refdocs).
.PHONY: refdocs
refdocs: $(CRD_REF_DOCS) ## docs/reference/ from the API types, the binary's flags and the chart's values
	$(CRD_REF_DOCS) --log-level ERROR --source-path api/v2beta1 --config hack/refdocs/crd-ref-docs.yaml \
	  --renderer markdown --templates-dir hack/refdocs/templates --output-path docs/reference/api.md
	go run ./hack/refdocs -out docs/reference/configuration.md

.PHONY: build
build:
	go build -o $(BIN)/mpi-operator ./cmd/mpi-operator
	go build -o $(BIN)/kubectl-mpi ./cmd/kubectl-mpi

# The operator with the race detector, for make chaos: a race that real
# concurrency runs into is reported in its log, and fails the run.
.PHONY: build-race
build-race:
	go build -race -o $(BIN)/mpi-operator-race ./cmd/mpi-operator

# The integration tests run a real kube-apiserver and etcd, built from the
# Go module proxy by hack/build-k8s.sh and cached outside the clone.
# Every test runs with the race detector.
.PHONY: test
test: ## unit and integration tests, with the race detector
	KUBEBUILDER_ASSETS="$$(hack/build-k8s.sh)" go test -race -count=1 ./...

.PHONY: test-unit
test-unit:
	go test -race -count=1 $$(go list ./... | grep -v /test/)

# Fuzzing (go test -fuzz) of the reconciler against the fake client and of
# the builders against a real kube-apiserver, FUZZTIME each, with
# FUZZPARALLEL workers. make test runs their seeds and the inputs under
# testdata/fuzz; a failure found here is written there, to be committed
# with its fix. FUZZTIME is a count of inputs, not a duration: with a
# duration, Go 1.26's fuzzing coordinator can fail a target that found
# nothing ("context deadline exceeded" as the time runs out on a busy
# machine, golang/go#75804, fixed in Go 1.27; it failed .ci/run once).
FUZZTIME ?= 1000x
FUZZPARALLEL ?= 1
FUZZ = go test -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x -parallel $(FUZZPARALLEL) -fuzz

.PHONY: fuzz
fuzz: ## fuzz the reconciler and the builders, FUZZTIME (1000x: inputs) each
	$(FUZZ) '^FuzzReconcileNeverLoopsHot$$' ./internal/controller/
	KUBEBUILDER_ASSETS="$$(hack/build-k8s.sh)" $(FUZZ) '^FuzzChildrenAreAdmitted$$' ./test/fuzz/

# User pages (README.md, CONTRIBUTING.md, SECURITY.md, docs/*.md) say what
# is true now: no date, time of day or commit hash. Those go beside their
# command in docs/records/ (hack/docscheck).
.PHONY: docscheck
docscheck: ## no date, time of day or commit hash on a user page
	go run ./hack/docscheck

.PHONY: verify
verify: docscheck generate manifests metricsdoc refdocs lint actionlint ## docscheck, gofmt, go vet, golangci-lint, actionlint and freshness of generated code
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	go vet -tags e2e ./...
	@git diff --exit-code -- api config charts test/integration/gang/testdata docs/metrics.md docs/reference || { echo "generated code is stale: run make generate manifests metricsdoc refdocs and commit"; exit 1; }

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint (v2, pinned in hack/tools/golangci-lint)
	$(GOLANGCI_LINT) run ./...

# actionlint also runs shellcheck on the workflows' run: scripts when
# shellcheck is on PATH (apt-get install shellcheck); it skips them if not.
.PHONY: actionlint
actionlint: $(ACTIONLINT) ## lint .github/workflows (actionlint, pinned in hack/tools/actionlint)
	$(ACTIONLINT)

# A real single-node cluster on this machine (containerd, kubelet, CoreDNS,
# control plane built from the Go module proxy), with the operator deployed.
.PHONY: cluster-up
cluster-up: ## start the local cluster (idempotent)
	hack/cluster/up.sh

.PHONY: cluster-down
cluster-down: ## stop the local cluster and undo its changes to the machine
	hack/cluster/down.sh

# Kueue v0.17.0 (built once from the Go module proxy) as a process beside
# the local cluster, with its MPIJob integration and webhooks; the e2e
# suite's Kueue tests need it, and fail rather than skip without it here.
.PHONY: kueue-up
kueue-up: cluster-up ## start Kueue against the local cluster (idempotent)
	hack/kueue/up.sh

.PHONY: kueue-down
kueue-down: ## stop Kueue and remove its queues and webhooks (cluster-down does too)
	hack/kueue/down.sh

# MultiKueue: a manager cluster (API server, etcd, no node) with its own
# Kueue and operator, and the local cluster as its worker.
.PHONY: multikueue-up
multikueue-up: kueue-up ## start MultiKueue's manager cluster, the local one its worker (idempotent)
	hack/multikueue/up.sh

.PHONY: multikueue-down
multikueue-down: ## stop MultiKueue's manager cluster (cluster-down does too)
	hack/multikueue/down.sh

E2E_TEST = KUBECONFIG=$$(hack/cluster/kubeconfig.sh) E2E_REQUIRE_KUEUE=1 E2E_MANAGER_KUBECONFIG=$$(hack/multikueue/kubeconfig.sh) go test -count=1 -tags e2e -timeout 45m -v ./test/e2e/

.PHONY: test-e2e
test-e2e: multikueue-up ## real MPI jobs on the local cluster, some queued by Kueue
	$(E2E_TEST)

# What CI runs: the same suite with the operator built with -race
# (hack/cluster/race-image.sh); a race an operator Pod reports fails it.
.PHONY: test-e2e-race
test-e2e-race: multikueue-up ## make test-e2e on the operator built with -race
	image=$$(hack/cluster/race-image.sh) && E2E_OPERATOR_IMAGE=$$image $(E2E_TEST)

# A release: dist/ gets install.yaml, the packaged chart, the operator image
# for linux/amd64 and linux/arm64 (ko, an OCI layout), the kubectl-mpi
# archives with their checksums and the krew manifest. VERSION must be
# internal/version's (make manifests stamps it everywhere else).
VERSION ?= $(shell hack/version.sh)
.PHONY: release
release: ## dist/ for VERSION (default internal/version's): install.yaml, chart, image, kubectl-mpi, krew manifest
	hack/release/release.sh $(VERSION)

# Installs the operator into the current kubeconfig context (never done by
# make demo, which uses its own cluster). IMG names an image your cluster
# can pull (ko builds it: docs/install.md); with the helm CLI on PATH the
# chart is installed as a release, else config/default with kubectl.
IMG ?=
.PHONY: deploy
deploy: ## install the operator into the current kubeconfig context (IMG=registry/mpi-operator:tag)
	hack/deploy.sh install $(IMG)

.PHONY: undeploy
undeploy: ## remove what make deploy installed (the CRD, and so every MPIJob, too)
	hack/deploy.sh uninstall

.PHONY: demo
demo: ## from a bare machine: cluster up, run the pi MPIJob, print its output
	hack/demo.sh

# Benchmarks on a simulated cluster (real control plane, kwok nodes); the
# operator runs as a separate process. Figures, never assertions.
# Each benchmark starts from an empty cluster: objects left by an earlier
# run would be reconciled, and counted, during this one.
# The cluster is stopped afterwards (its 1000 simulated nodes keep a core
# busy); its logs and audit log stay in /var/lib/mpi-operator-bench/logs.
BENCH_RUN = trap hack/bench/down.sh EXIT && hack/bench/down.sh --purge && hack/bench/up.sh && go build -o $(BIN)/bench ./test/bench && \
	$(BIN)/bench -operator $(BIN)/mpi-operator

.PHONY: bench-quick
bench-quick: build ## startup and writes of 10- and 100-worker jobs against the floor (< 5 min)
	$(BENCH_RUN) -sizes 10,100 -runs 3 -nodes 100

.PHONY: bench
# make bench also runs kubeflow/mpi-operator (hack/build-upstream.sh) after
# this operator, at its defaults and with its limits raised, one at a time.
bench: build ## every scenario on 1000 kwok nodes, upstream's operator too; rewrites docs/benchmarks.md (< 40 min)
	$(BENCH_RUN) -sizes 10,100,1000 -runs 3 -nodes 1000 -throughput-jobs 100 -throughput-runs 3 -noise 0,10000,30000 \
	  -idle-jobs 1000 -upstream "$$(hack/build-upstream.sh)" -docs docs/benchmarks.md -command "make bench"

# Large jobs on 1000 kwok nodes: one MPIJob of 1000, 3000 and 10,000 workers,
# each against the floor of N+1 bare Pods in the same run, with the
# operator's CPU and peak RSS per job and the cleanup timings; rewrites the
# table in docs/scale.md. Not part of make bench (< 40 min).
.PHONY: bench-scale
bench-scale: build ## one job of 1000, 3000 and 10,000 workers against the floor; CPU, memory, cleanup (< 40 min)
	$(BENCH_RUN) -sizes 1000,3000,10000 -runs 1 -nodes 1000 -scale -out _output/bench-scale \
	  -docs docs/scale.md -command "make bench-scale"

# Correctness under failures on the same simulated cluster: MPIJobs of mixed
# sizes while the leader of two operator processes is killed again and
# again, the API server restarts once, workers are deleted and evicted and
# jobs suspended and resumed. It checks properties (docs/records/chaos.md) and exits
# non-zero on a violation; -seed=N reproduces a run's plan and choices.
CHAOS_RUN = trap hack/bench/down.sh EXIT && hack/bench/down.sh --purge && hack/bench/up.sh && go build -o $(BIN)/chaos ./test/chaos && \
	$(BIN)/chaos -operator $(BIN)/mpi-operator-race

.PHONY: chaos
chaos: build-race ## 200 MPIJobs (one of 1000 workers) under chaos, checked (< 20 min)
	$(CHAOS_RUN) $(CHAOS_ARGS)

# Kueue's Topology Aware Scheduling on the benchmark cluster: kwok nodes
# labelled by block, rack and host, Kueue and the operator as processes.
.PHONY: test-tas
test-tas: ## where Kueue's topology-aware scheduling puts an MPIJob's ranks, on kwok nodes (~2 min)
	trap hack/bench/down.sh EXIT && hack/bench/down.sh --purge && hack/bench/up.sh && hack/bench/kueue-up.sh && \
	  KUBECONFIG=$$(hack/bench/kubeconfig.sh) go test -race -count=1 -tags e2e -v ./test/tas/

.PHONY: chaos-short
chaos-short: build-race ## what CI runs: 30 MPIJobs (one of 100 workers) under chaos, checked (~3 min)
	$(CHAOS_RUN) -nodes 20 -jobs 30 -big-workers 100 -create-over 30s -run-min 10s -run-max 20s \
	  -kills 3 -apiserver-restart-at 40s -deletes 10 -evictions 8 -suspends 6 -action-every 1500ms -deadline 4m $(CHAOS_ARGS)
