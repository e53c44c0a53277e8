package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestPodsAreIndexedByJobAndRole(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   []string
	}{
		{"worker", builder.RoleLabels(job, builder.RoleWorker), []string{"ns/pi/worker"}},
		{"launcher", builder.RoleLabels(job, builder.RoleLauncher), []string{"ns/pi/launcher"}},
		{"no role", map[string]string{kubeflow.LabelJobName: "pi"}, nil},
		{"someone else's", map[string]string{"app": "web"}, nil},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: tc.labels}}
		keys, err := podInJob(pod)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, keys); diff != "" {
			t.Errorf("%s: index keys (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestOwnStatusWriteEndsTheWait: an MPIJob update (status only, so the
// generation is the same) brings a reconcile while one waits for the
// cache to show this controller's status write, and only then.
func TestOwnStatusWriteEndsTheWait(t *testing.T) {
	r := &Reconciler{}
	job := testjob.MakeMPIJob("pi", "ns").Obj()
	e := event.UpdateEvent{ObjectOld: job, ObjectNew: job.DeepCopy()}
	if r.ownWriteSeen().Update(e) {
		t.Error("a status update passed with no reconcile waiting for it")
	}
	r.mem.writtenOver.Store("ns/pi", "41")
	if !r.ownWriteSeen().Update(e) {
		t.Error("the status update a reconcile waits for did not pass")
	}
}

// TestOwnSliceWriteEndsTheWait: a slice event brings a reconcile while its
// job waits for the cache to show its slice writes, and only then.
func TestOwnSliceWriteEndsTheWait(t *testing.T) {
	r := &Reconciler{}
	job := testjob.MakeMPIJob("pi", "ns").Obj()
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "pi-ipv4-0", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, kubeflow.GroupVersion.WithKind(kubeflow.Kind))}}}
	created, updated := event.CreateEvent{Object: slice}, event.UpdateEvent{ObjectOld: slice, ObjectNew: slice}
	if r.sliceWriteSeen().Create(created) || r.sliceWriteSeen().Update(updated) {
		t.Error("a slice event passed with no reconcile waiting for it")
	}
	r.mem.slicesWritten.Store("ns/pi", sliceWrites{})
	if !r.sliceWriteSeen().Create(created) || !r.sliceWriteSeen().Update(updated) {
		t.Error("the slice events a reconcile waits for did not pass")
	}
}
