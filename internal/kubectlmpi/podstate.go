package kubectlmpi

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodState is what describe says of one worker or launcher Pod.
type PodState struct {
	// Name of the Pod; for a worker whose Pod does not exist, the name it
	// will have.
	Name string `json:"name"`
	// Phase is the Pod's phase, or Missing for a worker without a Pod.
	Phase string `json:"phase"`
	// Ready is the Pod's Ready condition.
	Ready bool `json:"ready"`
	// Terminating: the Pod is being deleted.
	Terminating bool `json:"terminating"`
	// Restarts adds up its containers' restart counts.
	Restarts int32 `json:"restarts"`
	// Node is where it was scheduled; empty while pending.
	Node string `json:"node,omitempty"`
	// LastTermination is the latest exit of any of its containers.
	LastTermination *Termination `json:"lastTermination,omitempty"`
}

// Termination is how a container last exited.
type Termination struct {
	Container  string       `json:"container"`
	ExitCode   int32        `json:"exitCode"`
	Reason     string       `json:"reason,omitempty"`
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// PhaseMissing is the phase describe gives a worker that has no Pod.
const PhaseMissing = "Missing"

func podState(p *corev1.Pod) PodState {
	s := PodState{
		Name:        p.Name,
		Phase:       string(p.Status.Phase),
		Ready:       podConditionTrue(p, corev1.PodReady),
		Terminating: p.DeletionTimestamp != nil,
		Node:        p.Spec.NodeName,
	}
	for _, cs := range p.Status.ContainerStatuses {
		s.Restarts += cs.RestartCount
	}
	s.LastTermination = lastTermination(p, false)
	return s
}

// lastTermination returns the latest exit of the Pod's containers, of a
// failed one only when failedOnly is set; a current state wins over the
// previous run's at the same time.
func lastTermination(p *corev1.Pod, failedOnly bool) *Termination {
	var best *Termination
	for _, cs := range p.Status.ContainerStatuses {
		for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
			if t == nil || (failedOnly && t.ExitCode == 0) {
				continue
			}
			if best == nil || (best.FinishedAt != nil && t.FinishedAt.After(best.FinishedAt.Time)) {
				best = &Termination{Container: cs.Name, ExitCode: t.ExitCode, Reason: t.Reason}
				if !t.FinishedAt.IsZero() {
					best.FinishedAt = new(t.FinishedAt)
				}
			}
		}
	}
	return best
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func podConditionTrue(p *corev1.Pod, t corev1.PodConditionType) bool {
	c := podCondition(p, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// isRunning reports whether the Pod runs and is not being deleted: a
// terminating worker is on its way out and counts as gone.
func isRunning(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
}

// containersStarted is when the Pod's first container started, from the
// kubelet's report; nil if none has.
func containersStarted(p *corev1.Pod) *metav1.Time {
	var first *metav1.Time
	for _, cs := range p.Status.ContainerStatuses {
		var at metav1.Time
		switch {
		case cs.State.Running != nil:
			at = cs.State.Running.StartedAt
		case cs.State.Terminated != nil:
			at = cs.State.Terminated.StartedAt
		default:
			continue
		}
		if !at.IsZero() && (first == nil || at.Before(first)) {
			first = new(at)
		}
	}
	return first
}

// byCreation sorts Pods oldest first, by name among equals (the API
// server's timestamps have a resolution of a second).
func byCreation(pods []corev1.Pod) {
	slices.SortStableFunc(pods, func(a, b corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}
