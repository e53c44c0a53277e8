package controller

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Found by make chaos: a restart's launcher Job made under its
// predecessor's name sat for minutes with no Pod, and the old one's
// Pod kept the Job controller's finalizer. kube-controller-manager, listing
// anew after an API server restart, took the new Job for the old one
// changed (builder.LauncherJobName). Each restart's Job has a name of its
// own, made while the old Job may still be going.
func TestRestartMakesItsLauncherJobUnderANewName(t *testing.T) {
	f, job, start := runningJob(t, 2)
	old := f.launcher(t)
	f.updatePod(t, "pi-worker-1", disrupt(start.Add(30*time.Second)))
	f.clock.SetTime(start.Add(2 * time.Minute))
	f.reconcile(t, job)
	f.reconcile(t, job)

	l := f.launcher(t)
	if l.Name != "pi-launcher-1" || l.UID == old.UID {
		t.Fatalf("launcher after the restart: %s (%s), want a new Job pi-launcher-1", l.Name, l.UID)
	}
	if ptr.Deref(l.Spec.BackoffLimit, -1) != 2 {
		t.Errorf("backoffLimit %v, want the 2 retries left", l.Spec.BackoffLimit)
	}
	err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-launcher"}, &batchv1.Job{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the replaced Job pi-launcher is still there: %v", err)
	}
}

// A job that an operator from before restarts named their Jobs restarted
// has its successor under upstream's name: that Job stays the launcher,
// and no other is made beside it.
func TestSuccessorUnderUpstreamsNameStaysTheLauncher(t *testing.T) {
	f, job, _ := runningJob(t, 2)
	current := f.launcher(t)
	got := f.job(t, job)
	raw, err := json.Marshal(restartRecord{Replaces: "uid-of-a-gone-job", BackoffLimit: 1, Count: 2, Cause: "worker Pod pi-worker-0 was disrupted (deleted)"})
	if err != nil {
		t.Fatal(err)
	}
	got.Annotations = map[string]string{AnnotationRestart: string(raw)}
	if err := f.client.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	f.writes = calls{}
	f.reconcile(t, got)
	if f.writes["create Job"] != 0 || f.writes["delete Job"] != 0 {
		t.Errorf("writes %v: a second launcher beside %s", f.writes, current.Name)
	}
	if now := f.job(t, job); !isTrue(&now.Status, kubeflow.JobRunning) {
		t.Errorf("conditions %+v, want Running on with %s", now.Status.Conditions, current.Name)
	}
}
