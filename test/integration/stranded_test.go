package integration

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// TestStoppedPodOfAGoneLauncherJobIsReleased: a launcher Pod of an
// earlier launcher Job, which is gone, stopped and being deleted but held
// by the Job controller's tracking finalizer (which kube-controller-manager
// leaves behind when its cache misses the Job's deletion), is released by
// the operator, with its own RBAC, and goes.
func TestStoppedPodOfAGoneLauncherJobIsReleased(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("pi", ns).Workers(1).Obj())
	l := launcherJob(t, job)

	gone := l.DeepCopy()
	gone.UID = uuid.NewUUID()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "pi-launcher-former", Namespace: ns, Labels: l.Spec.Template.Labels,
			Finalizers:      []string{batchv1.JobTrackingFinalizer},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(gone, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: *l.Spec.Template.Spec.DeepCopy(),
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	setPodPhase(t, pod, corev1.PodFailed, false)
	if err := k8s.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the stopped Pod of a gone launcher Job released and gone", func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
