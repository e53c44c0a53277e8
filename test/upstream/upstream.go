// Package upstream locates the files of the Kubeflow MPI Operator release
// the compatibility tests run as they are (its manifests, examples and
// Dockerfiles), fetched as a Go module like any dependency.
package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
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
	dir, err := ModuleDir(Version)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// ModuleDir is the folder of upstream's module at version in the module
// cache, fetched if need be. test/bench, which is no test, reads the
// manifests of the release whose binary it runs through it.
func ModuleDir(version string) (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", Module+"@"+version).Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		return "", fmt.Errorf("go mod download %s@%s: %w\n%s", Module, version, err, stderr)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w\n%s", Module, version, err, out)
	}
	if mod.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s printed no Dir:\n%s", Module, version, out)
	}
	return mod.Dir, nil
}
