package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// fakeLogs serves one log per Pod and records what was asked.
type fakeLogs struct {
	logs  map[string]string
	asked []string
}

func (f *fakeLogs) TailLines(_ context.Context, _, pod, container string, previous bool, lines int64) (string, error) {
	f.asked = append(f.asked, fmt.Sprintf("%s/%s/%t/%d", pod, container, previous, lines))
	log, ok := f.logs[pod]
	if !ok {
		return "", fmt.Errorf("pods %q not found", pod)
	}
	return log, nil
}

func TestFailedLauncherNamesTheAttemptAndKeepsItsLastLines(t *testing.T) {
	f, job, start := runningJob(t, 0)
	logs := &fakeLogs{logs: map[string]string{"pi-launcher-abcde": "rank 0 ready\nrank 1: segmentation fault\nmpirun: rank 1 exited\n"}}
	f.r.Logs = logs
	f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "launcher",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 139, Reason: "Error", FinishedAt: metav1.NewTime(start.Add(time.Minute))}}}}
	})
	f.updateLauncher(t, func(l *batchv1.Job) {
		now := metav1.NewTime(start.Add(time.Minute))
		l.Status.Active, l.Status.Failed = 0, 1
		l.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
		}
	})
	f.reconcile(t, job)

	c := getCondition(&f.job(t, job).Status, kubeflow.JobFailed)
	if c == nil || c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, "pi-launcher-abcde") || !strings.Contains(c.Message, "exited with code 139") {
		t.Fatalf("Failed condition does not name the attempt and its exit code: %+v", c)
	}
	ev := f.drainEvents()
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning BackoffLimitExceeded") || !strings.Contains(ev[0], "rank 1: segmentation fault\nmpirun: rank 1 exited") {
		t.Errorf("Failed event does not keep the log's last lines: %q", ev)
	}
	if len(logs.asked) != 1 || logs.asked[0] != fmt.Sprintf("pi-launcher-abcde/launcher/false/%d", failedLauncherLines) {
		t.Errorf("logs read: %q", logs.asked)
	}

	// Once Failed, the log is not read again.
	f.reconcile(t, job)
	if len(logs.asked) != 1 {
		t.Errorf("log read again after the job failed: %q", logs.asked)
	}
}

func TestLogExcerptFitsAnEventAndKeepsTheEnd(t *testing.T) {
	long := strings.Repeat("x", 2000) + "\nthe last line\n"
	got := logExcerpt{pod: "p", tail: long}.appendTo("MPIJob ns/pi failed")
	if len(got) > eventNoteLimit || !strings.HasPrefix(got, "MPIJob ns/pi failed\n") || !strings.HasSuffix(got, "the last line\n") {
		t.Errorf("excerpt of %d bytes: %.80q…%q", len(got), got, got[max(len(got)-20, 0):])
	}
	if got := (logExcerpt{pod: "p", tail: "  \n"}).appendTo("m"); got != "m" {
		t.Errorf("empty log added: %q", got)
	}
}

func TestLastFailedAttempt(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC)) }
	pod := func(name string, phase corev1.PodPhase, term *corev1.ContainerStateTerminated, last *corev1.ContainerStateTerminated) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at(0)}, Status: corev1.PodStatus{Phase: phase,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "launcher",
				State: corev1.ContainerState{Terminated: term}, LastTerminationState: corev1.ContainerState{Terminated: last}}}}}
	}
	oom := pod("a", corev1.PodFailed, &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: at(10)}, nil)
	restarted := pod("b", corev1.PodRunning, nil, &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error", FinishedAt: at(20)})
	running := pod("c", corev1.PodRunning, nil, nil)
	if p, how := lastFailedAttempt([]*corev1.Pod{oom, running}); p != oom || how != "Pod a: container launcher exited with code 137 (OOMKilled)" {
		t.Errorf("got %v %q", p, how)
	}
	if p, how := lastFailedAttempt([]*corev1.Pod{oom, restarted, running}); p != restarted || !strings.Contains(how, "code 2") {
		t.Errorf("got %v %q", p, how)
	}
	if p, _ := lastFailedAttempt([]*corev1.Pod{running}); p != nil {
		t.Errorf("a running attempt reported as failed: %v", p.Name)
	}
}

// failLauncherJob marks the launcher Job of runningJob failed at at, as
// the Job controller does once backoffLimit is spent.
func failLauncherJob(t *testing.T, f *fixture, at time.Time) {
	t.Helper()
	f.updateLauncher(t, func(l *batchv1.Job) {
		now := metav1.NewTime(at)
		l.Status.Active, l.Status.Failed = 0, 1
		l.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
		}
	})
}

// The cache can show the launcher Job failed before it shows the Pod
// that failed: the Failed condition waits for the Pod, so that it names
// the exit code, which a job run through MultiKueue could otherwise lose
// (its status is final, and copied to the manager once).
func TestFailedWaitsForTheCacheToShowTheFailedAttempt(t *testing.T) {
	f, job, start := runningJob(t, 0)
	failLauncherJob(t, f, start.Add(time.Minute))
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		t.Fatal(err)
	}
	if c := getCondition(&f.job(t, job).Status, kubeflow.JobFailed); c != nil {
		t.Fatalf("Failed written while the cache shows the launcher Pod running: %+v", c)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > conflictRetry {
		t.Errorf("requeued after %s, want a retry within %s", res.RequeueAfter, conflictRetry)
	}

	f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "launcher",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}}
	})
	f.reconcile(t, job)
	if c := getCondition(&f.job(t, job).Status, kubeflow.JobFailed); c == nil || !strings.Contains(c.Message, "exited with code 3") {
		t.Fatalf("Failed condition does not name the exit code: %+v", c)
	}
}

// A Pod that never shows its end holds the Failed condition back no
// longer than failureDetailWait.
func TestFailedIsWrittenWithoutTheAttemptOnceTheWaitIsOver(t *testing.T) {
	f, job, start := runningJob(t, 0)
	failLauncherJob(t, f, start.Add(time.Minute))
	f.reconcile(t, job)
	f.clock.SetTime(f.clock.Now().Add(failureDetailWait))
	f.reconcile(t, job)
	c := getCondition(&f.job(t, job).Status, kubeflow.JobFailed)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != "BackoffLimitExceeded" || strings.Contains(c.Message, "last failed attempt") {
		t.Fatalf("Failed condition %+v, want BackoffLimitExceeded without an attempt", c)
	}
}

// The Job controller adds Failed only once its Pods are gone, and deletes
// a restartPolicy OnFailure launcher that used up backoffLimit: what the
// Pod showed at FailureTarget is recorded, and the Failed condition still
// names the exit code once the Pod is gone.
func TestFailedNamesTheAttemptWhoseLauncherPodIsGone(t *testing.T) {
	f, job, start := runningJob(t, 0)
	at := metav1.NewTime(start.Add(time.Minute))
	f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "launcher", RestartCount: 1,
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error", FinishedAt: at}}}}
	})
	f.updateLauncher(t, func(l *batchv1.Job) {
		l.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue,
			Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: at}}
	})
	f.reconcile(t, job)
	if _, ok := f.job(t, job).Annotations[AnnotationFailure]; !ok {
		t.Fatalf("no failure record once the launcher Job is bound to fail")
	}

	pod := &corev1.Pod{}
	if err := f.r.Client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-launcher-abcde"}, pod); err != nil {
		t.Fatal(err)
	}
	if err := f.r.Client.Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	failLauncherJob(t, f, start.Add(time.Minute))
	f.reconcile(t, job)
	c := getCondition(&f.job(t, job).Status, kubeflow.JobFailed)
	if c == nil || !strings.Contains(c.Message, "Pod pi-launcher-abcde: container launcher exited with code 3 (Error)") {
		t.Fatalf("Failed condition does not name the attempt of the Pod that is gone: %+v", c)
	}
}
