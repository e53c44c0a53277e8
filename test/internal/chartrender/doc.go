// Package chartrender renders charts/mpi-operator as `helm template
// --include-crds` does, with the Helm v4 library, for the tests that
// compare it with config/ (test/manifests) and run the operator under its
// RBAC (test/integration).
package chartrender
