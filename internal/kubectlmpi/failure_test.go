package kubectlmpi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
	tp "github.com/mpi-operator/mpi-operator/internal/testpod"
)

func TestLastFailure(t *testing.T) {
	T, F := corev1.ConditionTrue, corev1.ConditionFalse
	j := job(3)
	workerFailed := cond(kubeflow.JobFailed, T, 50, "WorkerFailed",
		"worker Pod pi-worker-1 failed: container worker exited with code 3 (Error)")
	tm := func(s int) *metav1.Time { return new(metav1.NewTime(at(s))) }
	cases := map[string]struct {
		job       *kubeflow.MPIJob
		workers   []corev1.Pod
		launchers []corev1.Pod
		want      *Failure
	}{
		"nothing failed": {
			job:     job(3, cond(kubeflow.JobRunning, T, 5, "", "")),
			workers: pods(tp.Worker(j, 0).Running(at(3)).Obj()),
		},
		"the worker the operator recorded, though another failed later": {
			job: annotated(job(3, workerFailed), jobrecord.AnnotationFailure, `{"pod":"pi-worker-1","role":"worker","container":"worker","exitCode":3,"reason":"Error"}`),
			workers: pods(
				tp.Worker(j, 0).Running(at(3)).Exited(137, "Error", at(52)).Obj(),
				tp.Worker(j, 1).Running(at(3)).Exited(3, "Error", at(49)).Obj(),
				tp.Worker(j, 2).Running(at(3)).Obj(),
			),
			want: &Failure{
				Condition: "Failed", Reason: "WorkerFailed", Message: workerFailed.Message,
				Role: "worker", Pod: "pi-worker-1", Container: "worker", ExitCode: new(int32(3)), ExitReason: "Error", Time: tm(49),
			},
		},
		"the recorded worker is gone: read from the record": {
			job: annotated(job(3, workerFailed), jobrecord.AnnotationFailure, `{"pod":"pi-worker-1","role":"worker","container":"worker","exitCode":3,"reason":"Error"}`),
			want: &Failure{
				Condition: "Failed", Reason: "WorkerFailed", Message: workerFailed.Message,
				Role: "worker", Pod: "pi-worker-1", Container: "worker", ExitCode: new(int32(3)), ExitReason: "Error", Time: tm(50),
			},
		},
		"no record (an older operator's job): the message is not parsed": {
			job:  job(3, workerFailed),
			want: &Failure{Condition: "Failed", Reason: "WorkerFailed", Message: workerFailed.Message, Time: tm(50)},
		},
		"a launcher that failed for good": {
			job: annotated(job(3, cond(kubeflow.JobFailed, T, 90, "BackoffLimitExceeded",
				"MPIJob ns/pi failed: launcher Job pi-launcher: Job has reached the specified backoff limit; last failed attempt: Pod pi-launcher-b: container launcher exited with code 2 (Error)")),
				jobrecord.AnnotationFailure, `{"pod":"pi-launcher-b","role":"launcher","container":"launcher","exitCode":2,"reason":"Error"}`),
			launchers: pods(
				tp.Launcher(j, "a").Running(at(10)).Exited(2, "Error", at(90)).Obj(),
				tp.Launcher(j, "b").Running(at(30)).Exited(2, "Error", at(88)).Obj(),
			),
			want: &Failure{
				Condition: "Failed", Reason: "BackoffLimitExceeded",
				Message: "MPIJob ns/pi failed: launcher Job pi-launcher: Job has reached the specified backoff limit; last failed attempt: Pod pi-launcher-b: container launcher exited with code 2 (Error)",
				Role:    "launcher", Pod: "pi-launcher-b", Container: "launcher", ExitCode: new(int32(2)), ExitReason: "Error", Time: tm(88),
			},
		},
		"no Pod named: the latest failed one": {
			job: job(3),
			workers: pods(
				tp.Worker(j, 0).Running(at(3)).Exited(1, "Error", at(20)).Obj(),
				tp.Worker(j, 2).Running(at(3)).Exited(9, "OOMKilled", at(30)).Obj(),
			),
			want: &Failure{Role: "worker", Pod: "pi-worker-2", Container: "worker", ExitCode: new(int32(9)), ExitReason: "OOMKilled", Time: tm(30)},
		},
		"a past restart after the job ran again: the annotation tells the cause": {
			job: restarted(job(3, cond(kubeflow.JobRestarting, F, 40, "MPIJobRunning", "MPIJob ns/pi is running."),
				cond(kubeflow.JobRunning, T, 40, "", "")), `{"replaces":"u","count":1,"cause":"worker Pod pi-worker-2 was disrupted (Evicted)","lost":{"pod":"pi-worker-2","role":"worker","reason":"Evicted"}}`),
			want: &Failure{
				Condition: "Restarting", Reason: "MPIJobRunning", Message: "MPIJob ns/pi is running.",
				Cause: "worker Pod pi-worker-2 was disrupted (Evicted)", Role: "worker", Pod: "pi-worker-2", ExitReason: "Evicted", Time: tm(40),
			},
		},
		"a restart after a disruption names the worker": {
			job: restarted(job(3, cond(kubeflow.JobRestarting, T, 40, "MPIJobRestarting",
				"MPIJob ns/pi is restarting: worker Pod pi-worker-0 was disrupted (EvictionByEvictionAPI).")),
				`{"replaces":"u","count":1,"cause":"worker Pod pi-worker-0 was disrupted (EvictionByEvictionAPI)","lost":{"pod":"pi-worker-0","role":"worker","reason":"EvictionByEvictionAPI"}}`),
			want: &Failure{
				Condition: "Restarting", Reason: "MPIJobRestarting",
				Message: "MPIJob ns/pi is restarting: worker Pod pi-worker-0 was disrupted (EvictionByEvictionAPI).",
				Cause:   "worker Pod pi-worker-0 was disrupted (EvictionByEvictionAPI)",
				Role:    "worker", Pod: "pi-worker-0", ExitReason: "EvictionByEvictionAPI", Time: tm(40),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := LastFailure(tc.job, tc.workers, tc.launchers)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LastFailure (-want +got):\n%s", diff)
			}
		})
	}
}

func restarted(j *kubeflow.MPIJob, record string) *kubeflow.MPIJob {
	return annotated(j, AnnotationRestart, record)
}

func annotated(j *kubeflow.MPIJob, key, value string) *kubeflow.MPIJob {
	if j.Annotations == nil {
		j.Annotations = map[string]string{}
	}
	j.Annotations[key] = value
	return j
}
