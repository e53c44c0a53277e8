//go:build tools

// Package upstream pins the Kubeflow MPI Operator release that this
// operator replaces. hack/build-upstream.sh builds its own binary from the
// Go module proxy, so tests compare against what upstream really does
// rather than against our reading of its source.
package upstream

import _ "github.com/kubeflow/mpi-operator/cmd/mpi-operator"
