package builder

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func TestGateOnWorkersKeepsTheTemplatesGatesAndAddsOnce(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns"))
	launcherTemplate(job).Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/mine"}}
	l := LauncherJob(job, false, testOpts)
	pod := &corev1.Pod{Spec: l.Spec.Template.Spec}
	if GatedOnWorkers(pod) {
		t.Fatal("a launcher Job is gated before GateOnWorkers")
	}
	GateOnWorkers(l)
	GateOnWorkers(l)
	got := l.Spec.Template.Spec.SchedulingGates
	if len(got) != 2 || got[0].Name != "example.com/mine" || got[1].Name != WorkersGate {
		t.Fatalf("scheduling gates %v, want the template's and %s once", got, WorkersGate)
	}
	if !GatedOnWorkers(&corev1.Pod{Spec: l.Spec.Template.Spec}) {
		t.Error("GatedOnWorkers does not see the gate")
	}
}
