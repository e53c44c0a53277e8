package upstream

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestOurPiExamplesAreUpstreamsByteForByte: examples/v2beta1/pi/pi.yaml
// and pi-mpich.yaml say in their first line that they are upstream's;
// below it they must be, to the byte, so that what the e2e tests prove of
// them holds for upstream's.
func TestOurPiExamplesAreUpstreamsByteForByte(t *testing.T) {
	for _, file := range []string{"pi.yaml", "pi-mpich.yaml"} {
		t.Run(file, func(t *testing.T) {
			ours, err := os.ReadFile(filepath.Join("..", "..", "examples", "v2beta1", "pi", file))
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := os.ReadFile(filepath.Join(Dir(t), "examples", "v2beta1", "pi", file))
			if err != nil {
				t.Fatal(err)
			}
			header, body, _ := bytes.Cut(ours, []byte("\n"))
			if !bytes.HasPrefix(header, []byte("# ")) {
				t.Fatalf("first line %q is no comment naming upstream's file", header)
			}
			if !bytes.Equal(body, theirs) {
				t.Errorf("examples/v2beta1/pi/%s differs from upstream's below its first line", file)
			}
		})
	}
}
