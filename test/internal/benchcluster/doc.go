// Package benchcluster holds what the programs that drive the benchmark
// cluster (hack/bench/up.sh) share: the ServiceAccount identities the
// operator and upstream's run as, the kwok nodes, the API server's audit
// log and a bounded parallel loop.
// test/bench measures speed with them and test/chaos checks correctness
// under failures; both must see the cluster, and the operator's requests,
// the same way.
package benchcluster
