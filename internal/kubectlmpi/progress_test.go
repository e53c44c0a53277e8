package kubectlmpi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	tp "github.com/mpi-operator/mpi-operator/internal/testpod"
)

func TestProgressOf(t *testing.T) {
	T := corev1.ConditionTrue
	j := job(3, cond(kubeflow.JobCreated, T, 0, "", ""))
	gone := tp.Worker(j, 2).Scheduled("n", at(1)).Running(at(2)).Obj()
	gone.DeletionTimestamp = new(metav1.NewTime(at(3)))
	cases := map[string]struct {
		job      *kubeflow.MPIJob
		pods     []corev1.Pod
		want     Progress
		wantDone bool
	}{
		"nothing yet": {
			job:  j,
			want: Progress{Phase: "Created", Workers: 3, Launcher: LauncherNone},
		},
		"some scheduled, one running, a terminating one not counted, launcher pending": {
			job: j,
			pods: pods(
				tp.Worker(j, 0).Scheduled("n", at(1)).Running(at(2)).Obj(),
				tp.Worker(j, 1).Scheduled("n", at(1)).Obj(),
				gone,
				tp.Worker(j, 5).Scheduled("n", at(1)).Running(at(2)).Obj(),
				tp.Launcher(j, "a").Obj(),
			),
			want: Progress{Phase: "Created", Workers: 3, Scheduled: 2, Running: 1, Launcher: "Pending"},
		},
		"the newest launcher runs": {
			job: j,
			pods: pods(
				tp.Launcher(j, "new").Created(at(9)).Running(at(10)).Obj(),
				tp.Launcher(j, "old").Created(at(1)).Running(at(2)).Exited(1, "Error", at(3)).Obj(),
			),
			want:     Progress{Phase: "Created", Workers: 3, Launcher: "Running"},
			wantDone: true,
		},
		"a failed launcher attempt is not the end": {
			job:  j,
			pods: pods(tp.Launcher(j, "old").Running(at(2)).Exited(1, "Error", at(3)).Obj()),
			want: Progress{Phase: "Created", Workers: 3, Launcher: "Failed"},
		},
		"the job failed": {
			job:      job(3, cond(kubeflow.JobFailed, T, 5, "", "")),
			want:     Progress{Phase: "Failed", Workers: 3, Launcher: LauncherNone},
			wantDone: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ProgressOf(tc.job, tc.pods)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ProgressOf (-want +got):\n%s", diff)
			}
			if got.Done() != tc.wantDone {
				t.Errorf("Done() = %t, want %t", got.Done(), tc.wantDone)
			}
		})
	}
}

func TestProgressLine(t *testing.T) {
	got := Progress{Phase: "Created", Workers: 20, Scheduled: 12, Running: 7, Launcher: "Pending"}.String()
	want := "workers scheduled 12/20, running 7/20; launcher Pending; phase Created"
	if got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
}
