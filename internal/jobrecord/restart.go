// Package jobrecord holds what the operator writes on an MPIJob besides
// its status, in the shape both the controller and kubectl mpi read: one
// type, so that the two never disagree on it.
package jobrecord

import (
	"encoding/json"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// AnnotationRestart, on an MPIJob, records the latest whole-job restart as
// JSON (Restart). The controller writes it before it ends the old
// attempt (internal/controller/durable.go).
const AnnotationRestart = "mpi-operator.kubeflow.org/restart"

// Restart is the value of AnnotationRestart.
type Restart struct {
	// Replaces is the UID of the launcher Job the restart ends.
	Replaces types.UID `json:"replaces"`
	// BackoffLimit is the backoffLimit of the launcher Job made after it.
	BackoffLimit int32 `json:"backoffLimit"`
	// Count is how many times the job restarted.
	Count int32 `json:"count"`
	// Cause says which worker was lost, and how.
	Cause string `json:"cause"`
	// Lost is the worker whose loss or failure caused the restart.
	Lost *PodFailure `json:"lost,omitempty"`
	// AvoidNodes are the nodes the job's next attempts keep off: a worker
	// was lost with each, until the time given.
	AvoidNodes []AvoidedNode `json:"avoidNodes,omitempty"`
}

// AvoidedNode is a node the job keeps off until Until.
type AvoidedNode struct {
	Node  string      `json:"node"`
	Until metav1.Time `json:"until"`
}

// MaxAvoidedNodes caps the nodes a record keeps: the latest are kept. A
// job that lost workers on more nodes than this has a cluster problem
// that keeping off nodes will not solve, and the record stays small.
const MaxAvoidedNodes = 16

// RestartOf reads the job's restart record; a missing or unreadable one
// (edited by hand, or written by upstream's operator, which writes none)
// is none.
func RestartOf(job *kubeflow.MPIJob) (Restart, bool) {
	var rec Restart
	if !decode(job, AnnotationRestart, &rec) || rec.Replaces == "" {
		return Restart{}, false
	}
	return rec, true
}

// decode reads the JSON of the job's annotation key into v; false if the
// annotation is missing or unreadable.
func decode(job *kubeflow.MPIJob, key string, v any) bool {
	raw, ok := job.Annotations[key]
	return ok && json.Unmarshal([]byte(raw), v) == nil
}

// Avoiding returns the nodes still avoided at now.
func (r Restart) Avoiding(now time.Time) []string {
	var out []string
	for _, a := range r.AvoidNodes {
		if now.Before(a.Until.Time) {
			out = append(out, a.Node)
		}
	}
	return out
}

// StillAvoided returns the nodes of prev still avoided at now.
func StillAvoided(prev []AvoidedNode, now time.Time) []AvoidedNode {
	var out []AvoidedNode
	for _, a := range prev {
		if now.Before(a.Until.Time) {
			out = append(out, a)
		}
	}
	return out
}

// Avoid adds node, kept off until until, to the nodes of prev still
// avoided at now; the oldest go past MaxAvoidedNodes.
func Avoid(prev []AvoidedNode, node string, now, until time.Time) []AvoidedNode {
	out := slices.DeleteFunc(StillAvoided(prev, now), func(a AvoidedNode) bool { return a.Node == node })
	out = append(out, AvoidedNode{Node: node, Until: metav1.NewTime(until)})
	if len(out) > MaxAvoidedNodes {
		out = out[len(out)-MaxAvoidedNodes:]
	}
	return out
}

// AnnotationFailure, on an MPIJob, says which Pod's failure failed the
// job, and how (PodFailure as JSON). The controller writes it before it
// marks the job Failed for a Pod, so kubectl mpi reads the details from
// it rather than from the condition's message, also once the Pod is gone.
const AnnotationFailure = "mpi-operator.kubeflow.org/failure"

// PodFailure is which Pod failed, and how.
type PodFailure struct {
	Pod string `json:"pod"`
	// Role is worker or launcher.
	Role string `json:"role,omitempty"`
	// Container is the container that exited with an error, with its
	// exit code; empty when the Pod failed before one did (evicted, or
	// gone unseen).
	Container string `json:"container,omitempty"`
	ExitCode  *int32 `json:"exitCode,omitempty"`
	// Reason is the container's (OOMKilled, Error), else the
	// disruption's (EvictionByEvictionAPI, DeletionByTaintManager), else
	// the Pod's.
	Reason string `json:"reason,omitempty"`
}

// FailureOf reads AnnotationFailure; a missing or unreadable one is none.
func FailureOf(job *kubeflow.MPIJob) (PodFailure, bool) {
	var f PodFailure
	if !decode(job, AnnotationFailure, &f) || f.Pod == "" {
		return PodFailure{}, false
	}
	return f, true
}
