// Package manifests checks what config/default renders (kustomize, through
// kubectl) before anything is applied: the operator Pod's hardening, its
// high availability, and that leader election's RBAC stays in the
// install's namespace, whichever namespace that is.
package manifests
