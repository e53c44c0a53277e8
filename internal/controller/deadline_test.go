package controller

import (
	"context"
	"math"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func TestActiveDeadline(t *testing.T) {
	cases := map[string]struct {
		seconds int64
		failed  bool
	}{
		"passed":  {seconds: 60, failed: true},
		"not yet": {seconds: 3600},
		// The CRD admits any int64 from 1; as a Duration the largest wrap
		// around to the past and failed the job at once.
		"MaxInt64":                 {seconds: math.MaxInt64},
		"largest a Duration holds": {seconds: int64(math.MaxInt64 / time.Second)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := testjob.MakeMPIJob("pi", "ns").ActiveDeadline(tc.seconds).Obj()
			// The expectations must learn of the first reconcile's Pods.
			f, _ := newRestFixture(t, job)
			f.reconcile(t, job) // sets startTime
			f.clock.SetTime(f.clock.Now().Add(61 * time.Second))
			f.reconcile(t, job)
			got := &kubeflow.MPIJob{}
			if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(job), got); err != nil {
				t.Fatal(err)
			}
			if failed := isTrue(&got.Status, kubeflow.JobFailed); failed != tc.failed {
				t.Errorf("activeDeadlineSeconds %d, 61 s after the start: failed = %t, want %t (conditions %+v)",
					tc.seconds, failed, tc.failed, got.Status.Conditions)
			}
		})
	}
}
