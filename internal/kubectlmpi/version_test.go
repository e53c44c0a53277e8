package kubectlmpi

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/mpi-operator/mpi-operator/internal/version"
)

// `kubectl mpi version` needs no cluster and prints the release it was
// built as, in each output format.
func TestVersionPrintsTheRelease(t *testing.T) {
	for args, want := range map[string]string{
		"version":         "kubectl-mpi " + version.Version + "\n",
		"version -o json": "{\n  \"plugin\": \"" + version.Version + "\"\n}\n",
		"version -o yaml": "plugin: " + version.Version + "\n",
	} {
		t.Run(args, func(t *testing.T) {
			var out bytes.Buffer
			cmd := NewCommand(Options{Streams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}})
			cmd.SetArgs(strings.Fields(args))
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Errorf("got %q, want %q", out.String(), want)
			}
		})
	}
}
