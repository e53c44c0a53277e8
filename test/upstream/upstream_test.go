package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionMatchesTheBinarysPin(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "hack", "upstream", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if want := Module + " " + Version; !strings.Contains(string(raw), want) {
		t.Errorf("hack/upstream/go.mod does not require %s: the tests would compare against another release than upstream's binary", want)
	}
}

func TestDirHoldsUpstreamsExamples(t *testing.T) {
	if _, err := os.Stat(filepath.Join(Dir(t), "examples", "v2beta1", "pi", "pi.yaml")); err != nil {
		t.Fatal(err)
	}
}
