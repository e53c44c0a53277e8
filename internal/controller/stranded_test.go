package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Found by make chaos: a restart's former launcher Pod, stopped, kept the
// Job controller's finalizer after its Job was gone, for ever
// (stranded.go). The operator releases it once the Job controller has had
// its time, and only the Pods of a Job that is gone.
func TestStoppedPodOfAGoneLauncherJobIsReleased(t *testing.T) {
	f, job, _ := runningJob(t, 0)
	current := f.launcher(t)
	gone := current.DeepCopy()
	gone.UID = uuid.NewUUID()
	stopped := func(name string, owner *batchv1.Job) {
		t.Helper()
		p := launcherPod(job, owner, 0)
		p.Name = name
		p.Finalizers = []string{batchv1.JobTrackingFinalizer}
		if err := f.client.Create(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		f.updatePod(t, name, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })
		if err := f.client.Delete(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	stopped("pi-launcher-old", gone)
	stopped("pi-launcher-counting", current)

	finalizers := func(name string) []string {
		t.Helper()
		p := &corev1.Pod{}
		err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, p)
		if apierrors.IsNotFound(err) {
			return nil // released: a Pod being deleted goes with its last finalizer
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.DeletionTimestamp == nil {
			t.Fatalf("Pod %s is not being deleted", name)
		}
		return p.Finalizers
	}
	f.reconcile(t, job)
	if !slices.Contains(finalizers("pi-launcher-old"), batchv1.JobTrackingFinalizer) {
		t.Fatal("released at once, before the Job controller had its time")
	}
	// The fake client dates the deletion from the wall clock.
	f.clock.SetTime(time.Now().Add(strandedAfter + time.Second))
	f.reconcile(t, job)
	if slices.Contains(finalizers("pi-launcher-old"), batchv1.JobTrackingFinalizer) {
		t.Errorf("the stopped Pod of a gone launcher Job keeps the Job controller's finalizer")
	}
	if !slices.Contains(finalizers("pi-launcher-counting"), batchv1.JobTrackingFinalizer) {
		t.Errorf("released a Pod of the current launcher Job, which the Job controller counts")
	}
}
