//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// TestLostWorkerRestartsTheJobAcrossALeaderChange: the program fails
// once (its container restarts: 1 of backoffLimit 2 used), then a worker is
// evicted while the ranks run. The leader records the restart, and is
// killed as soon as the record is in the API, before the new attempt
// starts. The next leader carries the restart through with the 1 retry the
// program had left (not a full backoffLimit again, and no second restart,
// though the leader that decided it is gone), and the job succeeds.
//
// The leader is killed after the record, not with the eviction: a leader
// that never saw the evicted Pod cannot know when it went, and gives the
// retries back (firstDisruptionSince), which a kill at the same moment made
// this test meet now and then.
func TestLostWorkerRestartsTheJobAcrossALeaderChange(t *testing.T) {
	// The program fails once: the mark it leaves on worker 0 (which is not
	// replaced) makes every later run go on.
	job := mpiJob(t, openMPI4, false, 2, "sh", "-c", `w0=$(head -n1 /etc/mpi/hostfile | cut -d' ' -f1)
if mpirun -n 1 -H "$w0" test -e /tmp/failed-once; then sleep 15; exec mpirun -n 2 /opt/mpi/ranks; fi
mpirun -n 1 -H "$w0" touch /tmp/failed-once; exit 1`)
	job.Spec.RunPolicy.BackoffLimit = ptr.To[int32](2)
	create(t, job)

	// Running, and the launcher's container has failed once.
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
		got := &kubeflow.MPIJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil || !isTrue(got, kubeflow.JobRunning) {
			return false, nil
		}
		for _, p := range launcherPods(t, job) {
			for _, cs := range p.Status.ContainerStatuses {
				// The failure's time and the eviction's are whole
				// seconds, and a failure in the eviction's second counts
				// as caused by it (failuresSince): the eviction waits
				// for the next second. (The kubelet restarts the
				// container within a second: the eviction came in the
				// same second once, and the new launcher got 2 retries.)
				if term := cs.LastTerminationState.Terminated; cs.RestartCount > 0 && cs.State.Running != nil &&
					term != nil && time.Since(term.FinishedAt.Time) > time.Second {
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("job never ran its second try: %v", err)
	}

	leader := leaderPod(t, func(string) bool { return true })
	victim := workerNames(job, 2)[1]
	if err := clientset.PolicyV1().Evictions(job.Namespace).Evict(context.Background(),
		&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: victim, Namespace: job.Namespace}}); err != nil {
		t.Fatalf("evicting %s: %v", victim, err)
	}
	recorded := &kubeflow.MPIJob{}
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(job), recorded)
		return err == nil && recorded.Annotations["mpi-operator.kubeflow.org/restart"] != "", nil
	})
	if err != nil {
		t.Fatalf("no restart recorded after evicting %s: %v", victim, err)
	}
	if err := clientset.CoreV1().Pods(operatorNamespace).Delete(context.Background(), leader, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("killing the leader %s: %v", leader, err)
	}
	// The new launcher Job is held suspended until the old launcher's Pod
	// has stopped (its 30 s grace, as sh ignores SIGTERM), so the next
	// leader is the one that starts it.
	next := &batchv1.Job{}
	err = k8s.Get(context.Background(), client.ObjectKey{Namespace: job.Namespace, Name: job.Name + "-launcher-1"}, next)
	if err == nil && !ptr.Deref(next.Spec.Suspend, false) {
		t.Fatalf("the new launcher Job was started before the leader %s was killed", leader)
	}
	t.Logf("evicted %s; killed the leader %s once it recorded the restart", victim, leader)

	got := expectRestartedThenRanksOn(t, job, workerNames(job, 2)...)
	// The restart as the operator wrote it down before ending the old
	// attempt (internal/controller/durable.go).
	var rec struct {
		BackoffLimit int32  `json:"backoffLimit"`
		Count        int32  `json:"count"`
		Cause        string `json:"cause"`
	}
	raw := got.Annotations["mpi-operator.kubeflow.org/restart"]
	if err := json.Unmarshal([]byte(raw), &rec); err != nil || rec.Count != 1 || rec.BackoffLimit != 1 || !strings.Contains(rec.Cause, victim) {
		t.Errorf("restart record %q (%v), want 1 restart for %s with 1 retry left", raw, err, victim)
	}
	l := launcherJob(t, job, rec.Count)
	if got := ptr.Deref(l.Spec.BackoffLimit, -1); got != 1 {
		t.Errorf("new launcher Job has backoffLimit %d, want the 1 retry the program had left", got)
	}
	t.Logf("%s leads now", leaderPod(t, func(h string) bool { return h != leader }))
	t.Logf("restart record: %s", raw)
}

// launcherJob is the job's launcher Job after the given number of
// restarts: each restart makes its own, "<job>-launcher-<restarts>".
func launcherJob(t *testing.T, job *kubeflow.MPIJob, restarts int32) *batchv1.Job {
	t.Helper()
	l := &batchv1.Job{}
	name := job.Name + "-launcher"
	if restarts > 0 {
		name += "-" + strconv.Itoa(int(restarts))
	}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: job.Namespace, Name: name}, l); err != nil {
		t.Fatal(err)
	}
	return l
}
