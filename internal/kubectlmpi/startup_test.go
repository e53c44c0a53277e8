package kubectlmpi

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	tp "github.com/mpi-operator/mpi-operator/internal/testpod"
)

// reached maps each step to its seconds after creation, -1 where unknown.
func reached(t *testing.T, steps []StartupPhase) map[string]int {
	out := map[string]int{}
	for _, s := range steps {
		out[s.Phase] = -1
		if s.Time != nil {
			out[s.Phase] = int(s.Time.Sub(t0) / time.Second)
			if s.SinceCreated == nil || s.SinceCreated.Duration != s.Time.Sub(t0) {
				t.Errorf("step %q at %v: SinceCreated %v", s.Phase, s.Time, s.SinceCreated)
			}
		}
	}
	return out
}

func TestStartupPhases(t *testing.T) {
	T := corev1.ConditionTrue
	j := job(2)
	cases := map[string]struct {
		job       *kubeflow.MPIJob
		workers   []corev1.Pod
		launchers []corev1.Pod
		want      map[string]int
	}{
		"just created": {
			job: j,
			want: map[string]int{
				StepJobCreated: 0, StepFirstWorkerPod: -1, StepAllWorkerPods: -1, StepWorkersScheduled: -1, StepWorkersRunning: -1,
				StepWorkersReady: -1, StepLauncherPod: -1, StepLauncherRunning: -1, StepRunningCondition: -1, StepFinishedCondition: -1,
			},
		},
		"one worker of two scheduled: the all-workers steps wait": {
			job: j,
			workers: pods(
				tp.Worker(j, 0).Created(at(1)).Scheduled("n1", at(2)).Running(at(4)).Obj(),
				tp.Worker(j, 1).Created(at(3)).Obj(),
			),
			want: map[string]int{
				StepJobCreated: 0, StepFirstWorkerPod: 1, StepAllWorkerPods: 3, StepWorkersScheduled: -1, StepWorkersRunning: -1,
				StepWorkersReady: -1, StepLauncherPod: -1, StepLauncherRunning: -1, StepRunningCondition: -1, StepFinishedCondition: -1,
			},
		},
		"one worker Pod of two: the all-workers steps wait for the other": {
			job:     j,
			workers: pods(tp.Worker(j, 0).Created(at(1)).Scheduled("n1", at(2)).Running(at(4)).Ready(at(5)).Obj()),
			want: map[string]int{
				StepJobCreated: 0, StepFirstWorkerPod: 1, StepAllWorkerPods: -1, StepWorkersScheduled: -1, StepWorkersRunning: -1,
				StepWorkersReady: -1, StepLauncherPod: -1, StepLauncherRunning: -1, StepRunningCondition: -1, StepFinishedCondition: -1,
			},
		},
		"running: each step at its last worker, the first launcher attempt": {
			job: job(2, cond(kubeflow.JobCreated, T, 0, "", ""), cond(kubeflow.JobRunning, T, 12, "", "")),
			workers: pods(
				tp.Worker(j, 1).Created(at(2)).Scheduled("n2", at(5)).Running(at(8)).Ready(at(9)).Obj(),
				tp.Worker(j, 0).Created(at(1)).Scheduled("n1", at(3)).Running(at(6)).Ready(at(7)).Obj(),
				// A leftover of a scale-down counts for nothing.
				tp.Worker(j, 2).Created(at(30)).Obj(),
			),
			launchers: pods(
				tp.Launcher(j, "second").Created(at(40)).Scheduled("n1", at(40)).Running(at(41)).Obj(),
				tp.Launcher(j, "first").Created(at(9)).Scheduled("n1", at(9)).Running(at(11)).Obj(),
			),
			want: map[string]int{
				StepJobCreated: 0, StepFirstWorkerPod: 1, StepAllWorkerPods: 2, StepWorkersScheduled: 5, StepWorkersRunning: 8,
				StepWorkersReady: 9, StepLauncherPod: 9, StepLauncherRunning: 11, StepRunningCondition: 12, StepFinishedCondition: -1,
			},
		},
		"succeeded with its workers cleaned up": {
			job: job(2, cond(kubeflow.JobCreated, T, 0, "", ""), cond(kubeflow.JobSucceeded, T, 60, "", "")),
			launchers: pods(
				tp.Launcher(j, "a").Created(at(9)).Running(at(11)).Exited(0, "Completed", at(59)).Obj(),
			),
			want: map[string]int{
				StepJobCreated: 0, StepFirstWorkerPod: -1, StepAllWorkerPods: -1, StepWorkersScheduled: -1, StepWorkersRunning: -1,
				StepWorkersReady: -1, StepLauncherPod: 9, StepLauncherRunning: 11, StepRunningCondition: -1, StepFinishedCondition + " (Succeeded)": 60,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := reached(t, StartupPhases(tc.job, tc.workers, tc.launchers))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStartupPhasesInOrder(t *testing.T) {
	var names []string
	for _, s := range StartupPhases(job(1), nil, nil) {
		names = append(names, s.Phase)
	}
	want := []string{
		StepJobCreated, StepFirstWorkerPod, StepAllWorkerPods, StepWorkersScheduled, StepWorkersRunning,
		StepWorkersReady, StepLauncherPod, StepLauncherRunning, StepRunningCondition, StepFinishedCondition,
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}
