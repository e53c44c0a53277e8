package kubectlmpi

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/kubectlmpi"
	tp "github.com/mpi-operator/mpi-operator/internal/testpod"
	"github.com/mpi-operator/mpi-operator/test/integration/envtestutil"
)

// startWatch runs `kubectl mpi watch` in the background; the returned
// channel gets its result.
func startWatch(t *testing.T, out *syncBuffer, args ...string) <-chan error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), envtestutil.Timeout)
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		done <- runPlugin(ctx, kubectlmpi.Options{}, out, &syncBuffer{}, append([]string{"watch"}, args...)...)
	}()
	return done
}

func TestWatchEndsWhenTheLauncherRuns(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, ns, "pi", 2, nil, condition(kubeflow.JobCreated, T, "MPIJobCreated", ""))
	var out syncBuffer
	done := startWatch(t, &out, "pi", "-n", ns)
	waitForOutput(t, &out, "workers scheduled 0/2, running 0/2; launcher none; phase Created")

	now := metav1.Now().Time
	w0 := createPod(t, tp.Worker(job, 0))
	w1 := createPod(t, tp.Worker(job, 1))
	setPodStatus(t, w0, tp.Worker(job, 0).Scheduled("node-a", now).Obj().Status)
	setPodStatus(t, w1, tp.Worker(job, 1).Scheduled("node-b", now).Obj().Status)
	waitForOutput(t, &out, "workers scheduled 2/2, running 0/2")
	setPodStatus(t, w0, tp.Worker(job, 0).Scheduled("node-a", now).Running(now).Obj().Status)
	setPodStatus(t, w1, tp.Worker(job, 1).Scheduled("node-b", now).Running(now).Obj().Status)
	waitForOutput(t, &out, "running 2/2; launcher none")

	l := createPod(t, tp.Launcher(job, "abcde"))
	waitForOutput(t, &out, "running 2/2; launcher Pending")
	select {
	case err := <-done:
		t.Fatalf("watch ended before the launcher ran (%v):\n%s", err, out.String())
	default:
	}
	setPodStatus(t, l, tp.Launcher(job, "abcde").Scheduled("node-a", now).Running(now).Obj().Status)
	if err := <-done; err != nil {
		t.Fatalf("watch: %v\n%s", err, out.String())
	}

	t.Logf("kubectl mpi watch pi:\n%s", out.String())
	// Each change printed once, in order (not on a terminal: one line
	// per change).
	var got []string
	for line := range strings.Lines(out.String()) {
		_, progress, _ := strings.Cut(strings.TrimSpace(line), "pi: ")
		got = append(got, progress)
	}
	last := got[len(got)-1]
	if want := "workers scheduled 2/2, running 2/2; launcher Running; phase Created"; last != want {
		t.Errorf("last line = %q, want %q\n%s", last, want, out.String())
	}
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Errorf("line %d repeats the one before: %q", i, got[i])
		}
	}
}

func TestWatchOfAFailedJobFails(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, ns, "pi", 1, nil, condition(kubeflow.JobFailed, T, "WorkerFailed", "worker Pod pi-worker-0 failed: container worker exited with code 1 (Error)"))
	var out syncBuffer
	err := <-startWatch(t, &out, "pi", "-n", ns)
	if err == nil || !strings.Contains(err.Error(), "pi-worker-0") {
		t.Errorf("watch of a failed job: error %v, want one naming pi-worker-0", err)
	}
}

func TestWatchGivesUpAtItsTimeout(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, ns, "pi", 1, nil)
	var out syncBuffer
	err := <-startWatch(t, &out, "pi", "-n", ns, "--timeout", "1s")
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("watch of a job that never starts: error %v, want a timeout", err)
	}
}

func TestWatchOfAMissingJob(t *testing.T) {
	ns := newNamespace(t)
	var out syncBuffer
	if err := <-startWatch(t, &out, "nothere", "-n", ns); err == nil || !apierrors.IsNotFound(err) {
		t.Errorf("watch of a missing job: error %v, want not found", err)
	}
}
