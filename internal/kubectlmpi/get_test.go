package kubectlmpi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	tp "github.com/mpi-operator/mpi-operator/internal/testpod"
)

func TestSummarize(t *testing.T) {
	T := corev1.ConditionTrue
	j := restarted(job(3, cond(kubeflow.JobRunning, T, 9, "", "")), `{"replaces":"u","count":2}`)
	terminating := tp.Worker(j, 2).Running(at(2)).Obj()
	terminating.DeletionTimestamp = new(metav1.NewTime(at(20)))
	got := Summarize(j, pods(
		tp.Worker(j, 0).Running(at(2)).Obj(),
		tp.Worker(j, 1).Obj(),
		terminating,
	))
	want := JobSummary{
		Namespace: "ns", Name: "pi", Phase: "Running", WorkersRunning: 1, Workers: 3, Restarts: 2,
		CreationTimestamp: metav1.NewTime(t0),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
}

func TestWriteTable(t *testing.T) {
	jobs := []JobSummary{
		{Namespace: "a", Name: "pi", Phase: "Running", WorkersRunning: 2, Workers: 2, CreationTimestamp: metav1.NewTime(t0)},
		{Namespace: "b", Name: "allreduce-big", Phase: "Restarting", WorkersRunning: 7, Workers: 20, Restarts: 1, CreationTimestamp: metav1.NewTime(at(-3600))},
	}
	cases := map[string]struct {
		all  bool
		want string
	}{
		"one namespace": {want: `
NAME            PHASE        WORKERS   RESTARTS   AGE
pi              Running      2/2       0          90s
allreduce-big   Restarting   7/20      1          61m
`},
		"all namespaces": {all: true, want: `
NAMESPACE   NAME            PHASE        WORKERS   RESTARTS   AGE
a           pi              Running      2/2       0          90s
b           allreduce-big   Restarting   7/20      1          61m
`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteTable(&b, jobs, tc.all, at(90)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.TrimPrefix(tc.want, "\n"), b.String()); diff != "" {
				t.Errorf("table (-want +got):\n%s", diff)
			}
		})
	}
}
