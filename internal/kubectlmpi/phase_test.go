package kubectlmpi

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

func TestPhase(t *testing.T) {
	T, F := corev1.ConditionTrue, corev1.ConditionFalse
	cases := map[string]struct {
		conds []kubeflow.JobCondition
		want  string
	}{
		"no condition is Pending": {want: PhasePending},
		"only Created": {
			conds: []kubeflow.JobCondition{cond(kubeflow.JobCreated, T, 0, "", "")},
			want:  "Created",
		},
		"the latest true condition wins": {
			conds: []kubeflow.JobCondition{cond(kubeflow.JobRunning, T, 5, "", ""), cond(kubeflow.JobCreated, T, 0, "", "")},
			want:  "Running",
		},
		"a false condition is not the phase": {
			conds: []kubeflow.JobCondition{cond(kubeflow.JobCreated, T, 0, "", ""), cond(kubeflow.JobRunning, F, 9, "", "")},
			want:  "Created",
		},
		"restarting after running": {
			conds: []kubeflow.JobCondition{
				cond(kubeflow.JobCreated, T, 0, "", ""), cond(kubeflow.JobRunning, F, 20, "", ""), cond(kubeflow.JobRestarting, T, 20, "", ""),
			},
			want: "Restarting",
		},
		"same instant: the later in a job's life wins": {
			conds: []kubeflow.JobCondition{cond(kubeflow.JobSuspended, T, 0, "", ""), cond(kubeflow.JobCreated, T, 0, "", "")},
			want:  "Suspended",
		},
		"finished wins over an older-looking clock": {
			conds: []kubeflow.JobCondition{cond(kubeflow.JobFailed, T, 3, "", ""), cond(kubeflow.JobRunning, T, 9, "", "")},
			want:  "Failed",
		},
		"succeeded": {
			conds: []kubeflow.JobCondition{cond(kubeflow.JobCreated, T, 0, "", ""), cond(kubeflow.JobSucceeded, T, 30, "", "")},
			want:  "Succeeded",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Phase(job(1, tc.conds...)); got != tc.want {
				t.Errorf("Phase() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRestartCount(t *testing.T) {
	cases := map[string]struct {
		annotation *string
		want       int32
	}{
		"absent":     {want: 0},
		"unreadable": {annotation: new("{"), want: 0},
		"recorded":   {annotation: new(`{"replaces":"u","backoffLimit":3,"count":2,"cause":"worker Pod pi-worker-0 was disrupted"}`), want: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			j := job(1)
			if tc.annotation != nil {
				j.Annotations = map[string]string{AnnotationRestart: *tc.annotation}
			}
			if got := restartOf(j).Count; got != tc.want {
				t.Errorf("restart count = %d, want %d", got, tc.want)
			}
		})
	}
}
