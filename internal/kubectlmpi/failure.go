package kubectlmpi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
)

// Failure is the job's last failure: the condition that reports it and
// the Pod that failed, with how.
type Failure struct {
	// Condition is Failed (the job failed for good) or Restarting (the
	// job restarted after it); empty when only a Pod tells of it.
	Condition string `json:"condition,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
	// Cause is the latest restart's cause from the operator's restart
	// annotation, when Condition is Restarting: the condition's message
	// no longer says it once the job runs again.
	Cause string `json:"cause,omitempty"`
	// Role is worker or launcher.
	Role string `json:"role,omitempty"`
	// Pod is the Pod that failed.
	Pod string `json:"pod,omitempty"`
	// Container, ExitCode and ExitReason say how, when known: from the
	// Pod's container statuses or, when the Pod is gone, from the
	// condition's message.
	Container  string       `json:"container,omitempty"`
	ExitCode   *int32       `json:"exitCode,omitempty"`
	ExitReason string       `json:"exitReason,omitempty"`
	Time       *metav1.Time `json:"time,omitempty"`
}

// LastFailure finds the job's last failure: the Failed condition if the
// job failed, else the Restarting one if it ever restarted, together with
// the Pod that failed. The Pod the condition names wins; else the worker
// or launcher Pod whose container failed last. Nil if nothing failed.
func LastFailure(job *kubeflow.MPIJob, workers, launcherPods []corev1.Pod) *Failure {
	f := &Failure{}
	cond := findCondition(job, kubeflow.JobFailed)
	if cond == nil || cond.Status != corev1.ConditionTrue {
		cond = findCondition(job, kubeflow.JobRestarting)
	}
	// Which Pod failed, and how, as the operator recorded it.
	var named jobrecord.PodFailure
	if cond != nil {
		f.Condition, f.Reason, f.Message = string(cond.Type), cond.Reason, cond.Message
		f.Time = new(cond.LastTransitionTime)
		if cond.Type == kubeflow.JobRestarting {
			rec := restartOf(job)
			f.Cause = rec.Cause
			if rec.Lost != nil {
				named = *rec.Lost
			}
		} else {
			named, _ = jobrecord.FailureOf(job)
		}
	}
	var failed *corev1.Pod
	var how *Termination
	consider := func(pods []corev1.Pod) {
		for i := range pods {
			p := &pods[i]
			t := lastTermination(p, true)
			if t == nil && p.Status.Phase != corev1.PodFailed {
				continue
			}
			switch {
			case named.Pod != "" && p.Name == named.Pod:
			case failed != nil && failed.Name == named.Pod:
				continue
			case failed != nil && !laterFailure(t, how):
				continue
			}
			failed, how = p, t
		}
	}
	consider(workers)
	consider(launcherPods)

	switch {
	case failed != nil:
		f.Pod, f.Role = failed.Name, failed.Labels[kubeflow.LabelJobRole]
		if how != nil {
			f.Container, f.ExitCode, f.ExitReason = how.Container, new(how.ExitCode), how.Reason
			if how.FinishedAt != nil {
				f.Time = how.FinishedAt
			}
		} else {
			f.ExitReason = failed.Status.Reason
		}
	case named.Pod != "":
		// The Pod is gone; the operator's record still says how.
		f.Pod, f.Role = named.Pod, named.Role
		f.Container, f.ExitCode, f.ExitReason = named.Container, named.ExitCode, named.Reason
	case cond == nil:
		return nil
	}
	return f
}

// laterFailure reports whether a failed after b; a Pod that failed
// without a container exit (evicted before it ran) is the earliest.
func laterFailure(a, b *Termination) bool {
	switch {
	case a == nil || a.FinishedAt == nil:
		return false
	case b == nil || b.FinishedAt == nil:
		return true
	}
	return a.FinishedAt.After(b.FinishedAt.Time)
}

func workerIndex(job *kubeflow.MPIJob, p *corev1.Pod) (int, bool) {
	return builder.WorkerIndex(job, p.Name)
}
