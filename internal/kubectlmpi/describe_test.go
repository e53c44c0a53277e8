package kubectlmpi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	tp "github.com/mpi-operator/mpi-operator/internal/testpod"
)

// failedJob is a job of three workers whose worker 1 exited with code 3.
func failedJob() Objects {
	T, F := corev1.ConditionTrue, corev1.ConditionFalse
	msg := "worker Pod pi-worker-1 failed: container worker exited with code 3 (Error)"
	j := job(3,
		cond(kubeflow.JobCreated, T, 0, "MPIJobCreated", "MPIJob ns/pi is created."),
		cond(kubeflow.JobRunning, F, 50, "WorkerFailed", msg),
		cond(kubeflow.JobFailed, T, 50, "WorkerFailed", msg),
	)
	return Objects{
		Job: j,
		Workers: pods(
			tp.Worker(j, 1).Created(at(1)).Scheduled("node-b", at(2)).Running(at(4)).Exited(3, "Error", at(49)).Obj(),
			tp.Worker(j, 0).Created(at(1)).Scheduled("node-a", at(2)).Running(at(3)).Ready(at(5)).Restarts(1).Obj(),
		),
		LauncherJob: &batchv1.Job{Status: batchv1.JobStatus{Active: 1}},
		LauncherPods: pods(
			tp.Launcher(j, "x1").Created(at(6)).Scheduled("node-a", at(6)).Running(at(8)).Obj(),
		),
		Events: []corev1.Event{
			{Type: "Warning", Reason: "WorkerFailed", Message: msg + "\nmore", Count: 1, LastTimestamp: metav1.NewTime(at(50))},
			{Type: "Normal", Reason: "MPIJobCreated", Message: "MPIJob ns/pi is created.", EventTime: metav1.NewMicroTime(at(0))},
		},
	}
}

func TestDescribeListsEveryWorkerByIndex(t *testing.T) {
	d := Describe(failedJob())
	var got []string
	for _, w := range d.WorkerPods {
		got = append(got, w.Name+" "+w.Phase)
	}
	want := []string{"pi-worker-0 Running", "pi-worker-1 Failed", "pi-worker-2 Missing"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workers (-want +got):\n%s", diff)
	}
}

func TestWriteDescription(t *testing.T) {
	d := Describe(failedJob())
	var b strings.Builder
	if err := WriteDescription(&b, &d, at(60)); err != nil {
		t.Fatal(err)
	}
	want := `Name:       pi
Namespace:  ns
Phase:      Failed
Workers:    1/3 running
Restarts:   0
Age:        60s

Conditions:
  TYPE     STATUS  REASON         SINCE  MESSAGE
  Created  True    MPIJobCreated  60s    MPIJob ns/pi is created.
  Running  False   WorkerFailed   10s    worker Pod pi-worker-1 failed: container worker exited with code 3 (Error)
  Failed   True    WorkerFailed   10s    worker Pod pi-worker-1 failed: container worker exited with code 3 (Error)

Startup:
  STEP                      TIME                  AFTER CREATION
  MPIJob created            2026-01-02T03:04:05Z  0s
  first worker Pod created  2026-01-02T03:04:06Z  1s
  all worker Pods created   -                     -
  all workers scheduled     -                     -
  all workers running       -                     -
  all workers ready         -                     -
  launcher Pod created      2026-01-02T03:04:11Z  6s
  launcher running          2026-01-02T03:04:13Z  8s
  Running condition         -                     -
  finished (Failed)         2026-01-02T03:04:55Z  50s

Workers:
  NAME         PHASE    READY  RESTARTS  NODE    LAST EXIT
  pi-worker-0  Running  true   1         node-a  -
  pi-worker-1  Failed   false  0         node-b  3 (Error)
  pi-worker-2  Missing  false  0         -       -

Launcher: Job pi-launcher (active 1, succeeded 0, failed 0)
  ATTEMPT         PHASE    READY  RESTARTS  NODE    LAST EXIT
  pi-launcher-x1  Running  false  0         node-a  -

Last failure:
  Pod:        pi-worker-1 (worker)
  Exit:       container worker exited with code 3 (Error)
  At:         2026-01-02T03:04:54Z
  Condition:  Failed (WorkerFailed): worker Pod pi-worker-1 failed: container worker exited with code 3 (Error)

Events:
  TYPE     REASON         AGE  COUNT  MESSAGE
  Normal   MPIJobCreated  60s  1      MPIJob ns/pi is created.
  Warning  WorkerFailed   10s  1      worker Pod pi-worker-1 failed: container worker exited with code 3 (Error) [...]
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("describe (-want +got):\n%s", diff)
	}
}

// The nodes the job's restarts keep it off are shown while they are.
func TestWriteDescriptionShowsTheNodesAvoided(t *testing.T) {
	o := failedJob()
	o.Job.Annotations = map[string]string{AnnotationRestart: `{"replaces":"u","count":1,"cause":"c","avoidNodes":[` +
		`{"node":"node-a","until":"2026-01-02T03:14:05Z"},{"node":"node-b","until":"2026-01-02T03:04:06Z"}]}`}
	d := Describe(o)
	var b strings.Builder
	if err := WriteDescription(&b, &d, at(60)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Avoiding node:  node-a for 9m0s more (a worker was lost with it)\n") {
		t.Errorf("no line for node-a, avoided 9 more minutes:\n%s", b.String())
	}
	if strings.Contains(b.String(), "node-b for") {
		t.Errorf("node-b, whose time ran out, is shown:\n%s", b.String())
	}
}
