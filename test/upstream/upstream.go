// Package upstream locates the files of the Kubeflow MPI Operator release
// the compatibility tests run as they are (its manifests, examples and
// Dockerfiles), fetched as a Go module like any dependency.
package upstream

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// Module and Version name the release; hack/upstream/go.mod pins the same
// one for upstream's binary (TestVersionMatchesTheBinarysPin).
const (
	Module  = "github.com/kubeflow/mpi-operator"
	Version = "v0.8.2"
)

// Dir is the folder of upstream's module in the module cache; it fails
// the test when the module cannot be fetched.
func Dir(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", Module+"@"+Version).Output()
	if err != nil {
		t.Fatalf("go mod download %s@%s: %v", Module, Version, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s@%s printed no Dir: %v\n%s", Module, Version, err, out)
	}
	return mod.Dir
}
