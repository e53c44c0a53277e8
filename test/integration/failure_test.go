package integration

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// A launcher that fails for good: the Failed condition names its last
// failed attempt and the container's exit code and reason. The operator
// also asks for that attempt's log (pods/log); envtest has no kubelet to
// serve it, so the condition must not depend on it.
func TestFailedLauncherAttemptIsNamed(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("oom", ns).Workers(1).Obj())
	runWorkers(t, job, 1)
	l := launcherJob(t, job)

	// The Job controller's Pod, as it would make it from the template.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "oom-launcher-x7k2p", Namespace: ns, Labels: l.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(l, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: *l.Spec.Template.Spec.DeepCopy(),
	}
	if err := k8s.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, "launcher Pod OOMKilled", func(ctx context.Context) (bool, error) {
		p := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return false, err
		}
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name, Image: p.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: metav1.Now()}}}}
		err := k8s.Status().Update(ctx, p)
		return err == nil, err
	})
	finishLauncher(t, job, false, "BackoffLimitExceeded", "Job has reached the specified backoff limit")

	got := waitCondition(t, job, kubeflow.JobFailed, corev1.ConditionTrue)
	if c := condition(got, kubeflow.JobFailed); !strings.Contains(c.Message, pod.Name) || !strings.Contains(c.Message, "exited with code 137 (OOMKilled)") {
		t.Errorf("Failed condition does not name the attempt and how it failed: %q", c.Message)
	}
}
