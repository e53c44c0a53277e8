// Package kubectlmpi is the kubectl plugin `kubectl mpi`: it reads an
// MPIJob and what the operator made for it (worker Pods, the launcher Job
// and its Pods, the hostfile ConfigMap, events) and says in one screen
// where the job is, which phase of its startup took how long, and which
// worker or launcher attempt failed with which exit code — the questions
// `kubectl get mpijob` leaves open (kubeflow/mpi-operator#354, #90).
//
// What it shows is computed by pure functions of the objects (phase.go,
// startup.go, failure.go, progress.go), tested without a cluster; the
// commands only fetch the objects, call them and print.
package kubectlmpi
