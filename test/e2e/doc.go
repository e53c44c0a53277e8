//go:build e2e

// Package e2e runs real MPI programs as MPIJobs on the local cluster that
// hack/cluster/up.sh starts (make test-e2e), with the operator deployed in
// it. The tests assert what users care about: the job's outcome, and that
// every rank ran on the worker Pod it was meant to, with the right result.
package e2e
