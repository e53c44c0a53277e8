package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// lostWith plays the taint manager (reason DeletionByTaintManager) or
// the scheduler (PreemptionByScheduler): the worker was disrupted at.
func lostWith(reason string, at time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(at),
		})
	}
}

// avoidedBy returns the nodes a Pod spec's required node affinity keeps
// it off.
func avoidedBy(spec *corev1.PodSpec) []string {
	var out []string
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpNotIn {
					out = append(out, f.Values...)
				}
			}
		}
	}
	return out
}

// A worker lost with its node (the taint manager deleted it from a node
// gone NotReady) restarts the job, and the next attempt's worker and
// launcher keep off that node, for AvoidLostNodeFor: the record says so,
// and an event. A preempted worker says nothing against its node.
func TestWorkerLostWithItsNodeKeepsTheNextAttemptOffIt(t *testing.T) {
	for name, tc := range map[string]struct {
		reason string
		avoid  bool
	}{
		"node NotReady":    {reason: "DeletionByTaintManager", avoid: true},
		"kubelet eviction": {reason: "TerminationByKubelet", avoid: true},
		"preempted":        {reason: "PreemptionByScheduler"},
	} {
		t.Run(name, func(t *testing.T) {
			f, job, start := running(t, testjob.MakeMPIJob("pi", "ns").Workers(2).Obj())
			f.r.AvoidLostNodeFor = 10 * time.Minute
			w := &corev1.Pod{}
			if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-1"}, w); err != nil {
				t.Fatal(err)
			}
			w.Spec.NodeName = "node-a" // the scheduler's binding
			if err := f.client.Update(context.Background(), w); err != nil {
				t.Fatal(err)
			}
			f.updatePod(t, "pi-worker-1", lostWith(tc.reason, start.Add(30*time.Second)))
			f.reconcile(t, job) // records the restart
			rec, ok := restartOf(f.job(t, job))
			if !ok {
				t.Fatal("no restart recorded")
			}
			want := []string(nil)
			if tc.avoid {
				want = []string{"node-a"}
			}
			if got := rec.Avoiding(f.clock.Now()); !slices.Equal(got, want) {
				t.Fatalf("record avoids %v, want %v", got, want)
			}
			if tc.avoid {
				if until := rec.AvoidNodes[0].Until.Time; !until.Equal(f.clock.Now().Add(10 * time.Minute)) {
					t.Errorf("avoided until %s, want 10 min from now", until)
				}
				if ev := f.drainEvents(); !slices.ContainsFunc(ev, func(e string) bool {
					return strings.Contains(e, ReasonAvoidingNode) && strings.Contains(e, "node-a") && strings.Contains(e, "pi-worker-1")
				}) {
					t.Errorf("events %q: none says the job keeps off node-a", ev)
				}
			}

			f.reconcile(t, job) // the old attempt ends: a new launcher Job
			if got := avoidedBy(&f.launcher(t).Spec.Template.Spec); !slices.Equal(got, want) {
				t.Errorf("new launcher Job avoids %v, want %v", got, want)
			}
			f.deletePod(t, "pi-worker-1")
			f.r.Expectations.DeletionObserved("ns/pi", "pi-worker-1")
			f.reconcile(t, job) // the worker made again
			w = &corev1.Pod{}
			if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-1"}, w); err != nil {
				t.Fatal(err)
			}
			if got := avoidedBy(&w.Spec); !slices.Equal(got, want) {
				t.Errorf("replacement worker avoids %v, want %v", got, want)
			}

			// Once the time is up, a Pod made anew may go anywhere.
			f.clock.SetTime(f.clock.Now().Add(11 * time.Minute))
			if got := f.r.avoidedNodes(f.job(t, job)); len(got) != 0 {
				t.Errorf("after 11 min still avoiding %v", got)
			}
		})
	}
}
