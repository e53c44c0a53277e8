// Package gang tests gang scheduling against a real API server that serves
// Volcano's and scheduler-plugins' PodGroup CRDs and Kubernetes' Workload
// API (scheduling.k8s.io/v1alpha3, behind its feature gate). One operator
// per --gang-scheduling mode runs, each in a namespace of its own; the
// Kubeflow MPI Operator's own v0.8.2 binary runs beside them for the
// field-for-field comparison.
package gang
