// Package gang makes an MPIJob's Pods schedulable as one gang: all of them
// or none. It builds the group objects of the three schedulers the operator
// supports (Volcano's and scheduler-plugins' PodGroups, made as the Kubeflow
// MPI Operator v0.8 makes them, and Kubernetes' own Workload and PodGroup of
// scheduling.k8s.io/v1alpha3) and marks Pod templates as members. Everything
// here is a pure function of the MPIJob; the controller does the I/O.
package gang
