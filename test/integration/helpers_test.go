package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/controller"
	"github.com/mpi-operator/mpi-operator/test/integration/envtestutil"
)

var nsCounter atomic.Int32

// newNamespace makes a namespace of the test's own.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t%d", nsCounter.Add(1))}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// eventually polls cond until it returns true (see envtestutil).
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	envtestutil.Eventually(t, what, cond)
}

// consistently checks that cond holds for the whole of d.
func consistently(t *testing.T, what string, d time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ok, err := cond(context.Background())
		if err != nil || !ok {
			t.Fatalf("%s stopped holding (err: %v)", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func createJob(t *testing.T, job *kubeflow.MPIJob) *kubeflow.MPIJob {
	t.Helper()
	if err := k8s.Create(context.Background(), job); err != nil {
		t.Fatalf("creating MPIJob: %v", err)
	}
	return job
}

func getJob(ctx context.Context, job *kubeflow.MPIJob) (*kubeflow.MPIJob, error) {
	got := &kubeflow.MPIJob{}
	err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got)
	return got, err
}

// updateJob applies mutate to the latest version of the job, retrying on
// conflicts with the controller's status writes.
func updateJob(t *testing.T, job *kubeflow.MPIJob, mutate func(*kubeflow.MPIJob)) {
	t.Helper()
	eventually(t, "updating MPIJob", func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, job)
		if err != nil {
			return false, err
		}
		mutate(got)
		if err := k8s.Update(ctx, got); err != nil {
			return false, err
		}
		return true, nil
	})
}

// waitCondition waits until the job has the condition with the status.
func waitCondition(t *testing.T, job *kubeflow.MPIJob, ct kubeflow.JobConditionType, status corev1.ConditionStatus) *kubeflow.MPIJob {
	t.Helper()
	var got *kubeflow.MPIJob
	eventually(t, fmt.Sprintf("condition %s=%s", ct, status), func(ctx context.Context) (bool, error) {
		var err error
		if got, err = getJob(ctx, job); err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == ct {
				return c.Status == status, fmt.Errorf("condition %s is %s (%s)", ct, c.Status, c.Reason)
			}
		}
		return false, fmt.Errorf("no condition %s in %+v", ct, got.Status.Conditions)
	})
	return got
}

func condition(job *kubeflow.MPIJob, ct kubeflow.JobConditionType) *kubeflow.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == ct {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// workerPods lists the job's worker Pods that are not terminating.
func workerPods(ctx context.Context, job *kubeflow.MPIJob) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := k8s.List(ctx, &list, client.InNamespace(job.Namespace),
		client.MatchingLabels(builder.RoleSelectorLabels(job, builder.RoleWorker))); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// waitWorkers waits until exactly n live worker Pods exist, and returns them.
func waitWorkers(t *testing.T, job *kubeflow.MPIJob, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	eventually(t, fmt.Sprintf("%d worker Pods", n), func(ctx context.Context) (bool, error) {
		var err error
		pods, err = workerPods(ctx, job)
		return err == nil && len(pods) == n, fmt.Errorf("%d worker Pods: %w", len(pods), err)
	})
	return pods
}

// setPodPhase plays kubelet: it writes a worker Pod's phase (and Ready).
func setPodPhase(t *testing.T, pod *corev1.Pod, phase corev1.PodPhase, ready bool) {
	t.Helper()
	eventually(t, "setting Pod phase", func(ctx context.Context) (bool, error) {
		p := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return false, err
		}
		readyStatus := corev1.ConditionFalse
		if ready {
			readyStatus = corev1.ConditionTrue
		}
		p.Status.Phase = phase
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: readyStatus}}
		err := k8s.Status().Update(ctx, p)
		return err == nil, err
	})
}

// runWorkers marks all of a job's workers Running and Ready.
func runWorkers(t *testing.T, job *kubeflow.MPIJob, n int) {
	t.Helper()
	for _, p := range waitWorkers(t, job, n) {
		setPodPhase(t, &p, corev1.PodRunning, true)
	}
}

// launcherName is the name of the job's current launcher Job: each
// restart the MPIJob records makes one of its own.
func launcherName(ctx context.Context, job *kubeflow.MPIJob) (string, error) {
	got, err := getJob(ctx, job)
	if err != nil {
		return "", err
	}
	var rec struct {
		Count int32 `json:"count"`
	}
	if raw, ok := got.Annotations[controller.AnnotationRestart]; ok {
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			return "", fmt.Errorf("restart record %q: %w", raw, err)
		}
	}
	return builder.LauncherJobName(got, rec.Count), nil
}

// launcherJob waits for the current launcher Job and returns it.
func launcherJob(t *testing.T, job *kubeflow.MPIJob) *batchv1.Job {
	t.Helper()
	l := &batchv1.Job{}
	eventually(t, "launcher Job", func(ctx context.Context) (bool, error) {
		name, err := launcherName(ctx, job)
		if err != nil {
			return false, err
		}
		err = k8s.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: name}, l)
		return err == nil, err
	})
	return l
}

func launcherExists(ctx context.Context, job *kubeflow.MPIJob) (bool, error) {
	name, err := launcherName(ctx, job)
	if err != nil {
		return false, err
	}
	err = k8s.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: name}, &batchv1.Job{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// updateLauncherStatus plays the Job controller: it applies mutate to the
// launcher Job's status.
func updateLauncherStatus(t *testing.T, job *kubeflow.MPIJob, mutate func(*batchv1.Job)) {
	t.Helper()
	eventually(t, "updating launcher Job status", func(ctx context.Context) (bool, error) {
		name, err := launcherName(ctx, job)
		if err != nil {
			return false, err
		}
		l := &batchv1.Job{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: name}, l); err != nil {
			return false, err
		}
		mutate(l)
		err = k8s.Status().Update(ctx, l)
		return err == nil, err
	})
}

// startLauncher marks the launcher Job started with one ready Pod.
func startLauncher(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	updateLauncherStatus(t, job, func(l *batchv1.Job) {
		now := metav1.Now()
		l.Status.StartTime = &now
		l.Status.Active = 1
		l.Status.Ready = ptr.To[int32](1)
	})
}

// finishLauncher marks the launcher Job Complete or Failed, with the
// terminal-state conditions the API server requires.
func finishLauncher(t *testing.T, job *kubeflow.MPIJob, succeeded bool, reason, message string) {
	t.Helper()
	updateLauncherStatus(t, job, func(l *batchv1.Job) {
		now := metav1.Now()
		if l.Status.StartTime == nil {
			l.Status.StartTime = &now
		}
		l.Status.Active, l.Status.Ready = 0, ptr.To[int32](0)
		if succeeded {
			l.Status.Succeeded = 1
			l.Status.CompletionTime = &now
			l.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
			}
			return
		}
		l.Status.Failed = 1
		l.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now},
		}
	})
}
