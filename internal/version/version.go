// Package version holds the release version of the operator and of
// kubectl-mpi. It is the one place the version is kept: the Makefile reads
// it for make release, and make manifests stamps it into the chart and the
// kustomize image tag (make verify fails when they differ).
package version

// Version is the release this tree builds. A release build may override it
// with -ldflags "-X github.com/mpi-operator/mpi-operator/internal/version.Version=vX.Y.Z",
// which make release does only after checking it matches.
var Version = "v0.1.0"

// Image is the operator image a release publishes, without its tag.
const Image = "ghcr.io/mpi-operator/mpi-operator"
