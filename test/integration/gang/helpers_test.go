package gang

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/test/integration/envtestutil"
)

// eventually polls cond until it returns true (see envtestutil).
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	envtestutil.Eventually(t, what, cond)
}

// get waits until obj (named by its namespace and name) exists, and reads it.
func get(t *testing.T, obj client.Object) {
	t.Helper()
	eventually(t, fmt.Sprintf("%T %s/%s", obj, obj.GetNamespace(), obj.GetName()), func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return err == nil, err
	})
}

// gone waits until obj no longer exists.
func gone(t *testing.T, obj client.Object) {
	t.Helper()
	eventually(t, fmt.Sprintf("%T %s/%s deleted", obj, obj.GetNamespace(), obj.GetName()), func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), err
	})
}

// named is an empty obj with the job's namespace and the given name.
func named[T client.Object](obj T, job *kubeflow.MPIJob, name string) T {
	obj.SetNamespace(job.Namespace)
	obj.SetName(name)
	return obj
}

func updateJob(t *testing.T, job *kubeflow.MPIJob, mutate func(*kubeflow.MPIJob)) {
	t.Helper()
	eventually(t, "updating MPIJob", func(ctx context.Context) (bool, error) {
		got := &kubeflow.MPIJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
			return false, err
		}
		mutate(got)
		err := k8s.Update(ctx, got)
		return err == nil, err
	})
}

// readyWorkers plays kubelet: the job's n workers run and are Ready.
func readyWorkers(t *testing.T, job *kubeflow.MPIJob, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	for i := range n {
		p := named(&corev1.Pod{}, job, fmt.Sprintf("%s-worker-%d", job.Name, i))
		get(t, p)
		eventually(t, "a Ready worker", func(ctx context.Context) (bool, error) {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				return false, err
			}
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			err := k8s.Status().Update(ctx, p)
			return err == nil, err
		})
		pods = append(pods, *p)
	}
	return pods
}

// finishLauncher plays the Job controller: the launcher Job succeeds.
func finishLauncher(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	eventually(t, "launcher Job succeeded", func(ctx context.Context) (bool, error) {
		l := named(&batchv1.Job{}, job, job.Name+"-launcher")
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(l), l); err != nil {
			return false, err
		}
		now := metav1.Now()
		l.Status.StartTime = &now
		l.Status.Succeeded = 1
		l.Status.CompletionTime = &now
		l.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
		err := k8s.Status().Update(ctx, l)
		return err == nil, err
	})
}
