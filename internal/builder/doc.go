// Package builder computes the objects the controller makes for an MPIJob:
// the SSH Secret, the hostfile ConfigMap, the headless Service, the worker
// Pods and the launcher Job. Every function here is pure: it takes a
// defaulted MPIJob (and Options) and returns the desired object, so the
// whole shape of a job can be tested without a client or a cluster.
package builder
