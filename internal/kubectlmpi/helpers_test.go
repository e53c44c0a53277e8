package kubectlmpi

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// t0 is when the tests' jobs are created.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// at is t0 plus s seconds.
func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// job is a job of n workers created at t0 with the given conditions.
func job(n int32, conds ...kubeflow.JobCondition) *kubeflow.MPIJob {
	j := testjob.MakeMPIJob("pi", "ns").Workers(n).Obj()
	j.CreationTimestamp = metav1.NewTime(t0)
	j.Status.Conditions = conds
	return j
}

// cond is a condition of the given status that changed s seconds after t0.
func cond(t kubeflow.JobConditionType, s corev1.ConditionStatus, sec int, reason, msg string) kubeflow.JobCondition {
	return kubeflow.JobCondition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(at(sec))}
}

func pods(ps ...*corev1.Pod) []corev1.Pod {
	out := make([]corev1.Pod, 0, len(ps))
	for _, p := range ps {
		out = append(out, *p)
	}
	return out
}
