package main

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// clientConfigs returns the config of the operator's clients, which share
// one token bucket of qps requests a second and burst, so that
// --kube-api-qps and --kube-api-burst bound all of the operator's work as
// their help says. Without it each client keeps a bucket of its own:
// controller-runtime makes one REST client per kind (Pods, Jobs, the
// MPIJob status, ...), and the clientset that deletes Pods and reads logs
// is one more. Leader election gets the second config, with a bucket of
// its own: a Lease renewal must not wait behind a large job's Pod
// creates, or the leader would lose its Lease while busiest. A qps of
// zero or less turns client-side limiting off (client-go takes a negative
// QPS so; zero would be its default of 5 per client), leaving the API
// server's priority and fairness to pace the operator.
func clientConfigs(cfg *rest.Config, qps float32, burst int) (work, leaderElection *rest.Config) {
	if qps <= 0 {
		qps = -1
	}
	work = rest.CopyConfig(cfg)
	work.QPS, work.Burst, work.RateLimiter = qps, burst, nil
	leaderElection = rest.CopyConfig(work)
	if qps > 0 {
		work.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
	}
	return work, leaderElection
}
