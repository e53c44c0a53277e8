// Package v2beta1 is the kubeflow.org/v2beta1 MPIJob API. It is
// wire-compatible with the Kubeflow MPI Operator's v2beta1 API (same group,
// kind, JSON names, enum values and defaults) so that existing manifests,
// Kueue's MPIJob integration and client SDKs work unchanged. Validation lives
// in the CRD (OpenAPI and CEL markers on these types); Validate re-checks the
// same rules for the controller, which must never trust its input.
//
// +kubebuilder:object:generate=true
// +groupName=kubeflow.org
package v2beta1
