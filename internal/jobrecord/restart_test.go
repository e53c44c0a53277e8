package jobrecord

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

func TestRestartOfReadsOnlyAWholeRecord(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"replaces":"u","backoffLimit":2,"count":1,"cause":"c"}`: true,
		`{"count":1}`: false, // no launcher Job it ends: not ours
		`not json`:    false,
	} {
		job := &kubeflow.MPIJob{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationRestart: raw}}}
		if _, ok := RestartOf(job); ok != want {
			t.Errorf("RestartOf(%s): ok %t, want %t", raw, ok, want)
		}
	}
	if _, ok := RestartOf(&kubeflow.MPIJob{}); ok {
		t.Error("a job without the annotation has a record")
	}
}

// Nodes are avoided until their time runs out; a node lost again gets a
// new time; past the cap the oldest go.
func TestAvoidKeepsTheLatestNodesUntilTheirTime(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var nodes []AvoidedNode
	nodes = Avoid(nodes, "a", now, now.Add(10*time.Minute))
	nodes = Avoid(nodes, "b", now.Add(time.Minute), now.Add(11*time.Minute))
	r := Restart{AvoidNodes: nodes}
	if got := r.Avoiding(now.Add(5 * time.Minute)); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("at 5 min: avoiding %v, want a and b", got)
	}
	if got := r.Avoiding(now.Add(10 * time.Minute)); !slices.Equal(got, []string{"b"}) {
		t.Errorf("at 10 min: avoiding %v, want b only", got)
	}
	nodes = Avoid(nodes, "a", now.Add(12*time.Minute), now.Add(22*time.Minute))
	if len(nodes) != 1 || nodes[0].Node != "a" {
		t.Errorf("after both ran out and a was lost again: %+v, want a alone", nodes)
	}
	for i := range MaxAvoidedNodes + 3 {
		nodes = Avoid(nodes, fmt.Sprintf("n%d", i), now, now.Add(time.Hour))
	}
	if len(nodes) != MaxAvoidedNodes || nodes[len(nodes)-1].Node != fmt.Sprintf("n%d", MaxAvoidedNodes+2) {
		t.Errorf("%d nodes kept (last %s), want the latest %d", len(nodes), nodes[len(nodes)-1].Node, MaxAvoidedNodes)
	}
}
