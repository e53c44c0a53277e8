package integration

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/controller"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// TestRefusedCreatesAreOneEventSeries: while a quota refuses the workers,
// every retry warns again, and the retries are one FailedCreate event
// whose count grows (client-go patches the event's series), not one event
// per retry. (A new event starts when the job changes: the event names the
// job's resourceVersion.) Once the quota goes, the workers are made.
func TestRefusedCreatesAreOneEventSeries(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-pods", Namespace: ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
	}
	if err := k8s.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	// No kube-controller-manager runs: the test writes the usage the quota
	// controller would, without which admission refuses every Pod as of
	// unknown usage rather than over quota.
	quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}
	if err := k8s.Status().Update(ctx, quota); err != nil {
		t.Fatal(err)
	}
	job := createJob(t, testjob.MakeMPIJob("pi", ns).Workers(1).Obj())

	eventually(t, "a FailedCreate event repeated as a series", func(ctx context.Context) (bool, error) {
		var list eventsv1.EventList
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		var series []int32
		for _, e := range list.Items {
			if e.Regarding.Name == job.Name && e.Regarding.Kind == kubeflow.Kind && e.Reason == controller.ReasonFailedCreate {
				if e.Series == nil {
					series = append(series, 1)
					continue
				}
				if e.Series.Count >= 2 {
					return true, nil
				}
				series = append(series, e.Series.Count)
			}
		}
		return false, fmt.Errorf("FailedCreate events with counts %v", series)
	})

	if err := k8s.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	waitWorkers(t, job, 1)
}
