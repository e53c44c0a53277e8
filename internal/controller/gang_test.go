package controller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/mpi-operator/mpi-operator/internal/gang"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// newGangFixture is newFixture with gang scheduling in the given mode.
func newGangFixture(t *testing.T, mode string, objs ...client.Object) *fixture {
	t.Helper()
	f := newFixture(t, interceptor.Funcs{}, objs...)
	g, err := gang.New(mode, f.client.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	f.r.Gang = g
	return f
}

func TestGangGroupComesFirstAndIdleReconcilesWriteNothing(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	f := newGangFixture(t, gang.Volcano, job)
	f.reconcile(t, job)

	pg := &volcanov1beta1.PodGroup{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi"}, pg); err != nil {
		t.Fatalf("PodGroup: %v", err)
	}
	if pg.Spec.MinMember != 3 {
		t.Errorf("minMember %d, want 3", pg.Spec.MinMember)
	}
	pod := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-1"}, pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.SchedulerName != "volcano" || pod.Annotations[volcanov1beta1.KubeGroupNameAnnotationKey] != "pi" {
		t.Errorf("worker: schedulerName %q, annotations %v", pod.Spec.SchedulerName, pod.Annotations)
	}

	// The API server fills in Volcano's default queue; that is no change.
	pg.Spec.Queue = "default"
	if err := f.client.Update(context.Background(), pg); err != nil {
		t.Fatal(err)
	}
	f.writes = calls{}
	f.reconcile(t, job)
	if len(f.writes) != 0 {
		t.Errorf("idle reconcile wrote %v", f.writes)
	}
}

func TestGangPodsWaitWhileAnOldGroupIsDeleted(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	job.UID = "job-uid"
	old := &schedulingv1alpha3.PodGroup{ObjectMeta: metav1.ObjectMeta{
		Name: "pi", Namespace: "ns", Finalizers: []string{"scheduling.k8s.io/podgroup-protection"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob", Name: "pi", UID: "job-uid", Controller: ptr.To(true)}},
	}}
	f := newGangFixture(t, gang.Kubernetes, job, old)
	if err := f.client.Delete(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, job)
	if n := f.writes["create Pod"]; n != 0 {
		t.Errorf("created %d worker Pods while their PodGroup was being deleted", n)
	}

	// The PodGroupProtection controller lets it go: the Pods come.
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(old), old); err != nil {
		t.Fatal(err)
	}
	old.Finalizers = nil
	if err := f.client.Update(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, job)
	if n := f.writes["create Pod"]; n != 2 {
		t.Errorf("created %d worker Pods after the old PodGroup went, want 2", n)
	}
	pod := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-0"}, pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.SchedulingGroup == nil || ptr.Deref(pod.Spec.SchedulingGroup.PodGroupName, "") != "pi" {
		t.Errorf("worker schedulingGroup %v, want PodGroup pi", pod.Spec.SchedulingGroup)
	}
}
