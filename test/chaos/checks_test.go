package main

import (
	"context"
	"encoding/json"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/controller"
)

// A leader killed just after it recorded a restart leaves the restart to
// the next one; when the replaced launcher completed meanwhile, the next
// leader lets that outcome stand and makes no new launcher Job (chaos seed
// 635671 in CI). That restart is overtaken, not wrong; a replaced launcher
// that did not complete, with no new one, is still wrong.
func TestRestartOvertakenBeforeAnyLeaderCarriedItOut(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		complete      bool
		wantOvertaken int
		wantWrong     int
	}{
		{"replaced launcher complete", true, 1, 0},
		{"replaced launcher still running", false, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := plannedJob{name: "c019", workers: 8, backoff: 2}.mpiJob()
			job.Namespace = namespace
			rec, err := json.Marshal(restartRecord{Replaces: "old", BackoffLimit: 2, Count: 1, Cause: "worker Pod c019-worker-5 was disrupted (deleted)"})
			if err != nil {
				t.Fatal(err)
			}
			job.Annotations = map[string]string{controller.AnnotationRestart: string(rec)}
			old := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "c019-launcher", UID: "old"}}
			if tc.complete {
				old.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
			}
			e := &env{c: fake.NewClientBuilder().WithScheme(scheme).WithObjects(old).Build()}
			res, err := checkRestarts(context.Background(), e, []*kubeflow.MPIJob{job},
				map[string]plannedJob{job.Name: {name: job.Name, backoff: 2}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Overtaken != tc.wantOvertaken || len(res.Wrong) != tc.wantWrong {
				t.Errorf("overtaken %d, wrong %q; want %d overtaken, %d wrong", res.Overtaken, res.Wrong, tc.wantOvertaken, tc.wantWrong)
			}
		})
	}
}
