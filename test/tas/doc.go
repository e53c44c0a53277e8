// Package tas checks where Kueue's Topology Aware Scheduling puts an
// MPIJob's ranks, on the benchmark cluster's kwok nodes labelled by block,
// rack and host, with Kueue and the operator running as processes beside
// it (make test-tas: hack/bench/up.sh, then hack/bench/kueue-up.sh).
package tas
