// Package manifests checks what the install renders before anything is
// applied: config/default (kustomize, through kubectl) — the operator Pod's
// hardening, its high availability, leader election's RBAC staying in the
// install's namespace — and charts/mpi-operator (the Helm v4 library), which
// must render the same objects at its defaults, grant exactly the RBAC
// controller-gen generates, carry its CRD, and turn each value into the
// flag or object it documents.
package manifests
