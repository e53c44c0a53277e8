package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodsAreIndexedByJobAndRole(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   []string
	}{
		{"worker", builder.RoleLabels(job, builder.RoleWorker), []string{"pi/worker"}},
		{"launcher", builder.RoleLabels(job, builder.RoleLauncher), []string{"pi/launcher"}},
		{"no role", map[string]string{kubeflow.LabelJobName: "pi"}, nil},
		{"someone else's", map[string]string{"app": "web"}, nil},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: tc.labels}}
		if diff := cmp.Diff(tc.want, podJobRole(pod)); diff != "" {
			t.Errorf("%s: index keys (-want +got):\n%s", tc.name, diff)
		}
	}
}
