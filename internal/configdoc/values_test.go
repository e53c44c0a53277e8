package configdoc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseValues(t *testing.T) {
	const values = `# The file's own comment.
# Not its first key's.

image:
  repository: mpi-operator
  tag: latest

# Watched namespaces.
# Empty: all.
namespaces: []

# Limits.
client:
  # Requests per second.
  qps: 500
  burst: 1000

name: ""
labels: {}
list: [a, b]
`
	got, err := ParseValues([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	want := []Value{
		{Path: "image.repository", Default: "mpi-operator"},
		{Path: "image.tag", Default: "latest"},
		{Path: "namespaces", Default: "[]", Comment: "Watched namespaces. Empty: all."},
		{Path: "client", Comment: "Limits."},
		{Path: "client.qps", Default: "500", Comment: "Requests per second."},
		{Path: "client.burst", Default: "1000"},
		{Path: "name", Default: `""`},
		{Path: "labels", Default: "{}"},
		{Path: "list", Default: "[a, b]"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseValues (-want +got):\n%s", diff)
	}
}

func TestParseValuesRejectsANonMapping(t *testing.T) {
	if _, err := ParseValues([]byte("- a\n- b\n")); err == nil {
		t.Error("no error for a list")
	}
}
