package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
)

// A worker lost with its node, or to it, is restarted elsewhere: the
// restart record names the node, and the next attempts' Pods keep off it
// for Reconciler.AvoidLostNodeFor (a required node affinity,
// builder.AvoidNodes). Without it the scheduler may put the new attempt
// on the node that just lost it (kubeflow/trainer #2072, #2185).

// ReasonAvoidingNode is the reason of the event that says a job keeps off
// a node.
const ReasonAvoidingNode = "AvoidingNode"

// nodeCausedReasons are the DisruptionTarget reasons, and the Pod reasons,
// of a worker lost with its node or to it: the taint manager's deletion
// of a Pod on a node that is NotReady or unreachable, the kubelet's
// eviction under node pressure, the Pod garbage collector's deletion of a
// Pod whose node is gone. Preemption and the eviction API (a drain, the
// descheduler) say nothing against the node.
var nodeCausedReasons = map[string]bool{
	"DeletionByTaintManager": true,
	"TerminationByKubelet":   true,
	"DeletionByPodGC":        true,
	"Evicted":                true,
	"NodeLost":               true,
}

// lostToItsNode returns the node a worker was lost with or to, if that is
// how it was lost.
func lostToItsNode(pod *corev1.Pod) (string, bool) {
	if pod.Spec.NodeName == "" {
		return "", false
	}
	if c := findPodCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue && nodeCausedReasons[c.Reason] {
		return pod.Spec.NodeName, true
	}
	return pod.Spec.NodeName, nodeCausedReasons[pod.Status.Reason]
}

// avoidedNodes are the nodes the job's Pods keep off now.
func (r *Reconciler) avoidedNodes(job *kubeflow.MPIJob) []string {
	rec, ok := restartOf(job)
	if !ok {
		return nil
	}
	return rec.Avoiding(r.Clock.Now())
}

// avoidIn sets the nodes a restart's record keeps: those of the last
// record still avoided, and the node the worker was lost with, if it was.
// It returns that node, or "".
func (r *Reconciler) avoidIn(rec *restartRecord, prev restartRecord, pod *corev1.Pod, own bool) string {
	now := r.Clock.Now()
	kept := jobrecord.StillAvoided(prev.AvoidNodes, now)
	rec.AvoidNodes = kept
	node, lost := lostToItsNode(pod)
	if own || !lost || r.AvoidLostNodeFor <= 0 {
		return ""
	}
	rec.AvoidNodes = jobrecord.Avoid(kept, node, now, now.Add(r.AvoidLostNodeFor))
	return node
}

// announceAvoided tells the user, once the record is written, which node
// the job keeps off.
func (r *Reconciler) announceAvoided(_ context.Context, job *kubeflow.MPIJob, node, worker string) {
	if node == "" || r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(job, nil, corev1.EventTypeWarning, ReasonAvoidingNode, "Restart",
		"The next attempt keeps off node %s for %s: worker Pod %s was lost with it", node, r.AvoidLostNodeFor, worker)
}
