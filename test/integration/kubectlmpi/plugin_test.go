package kubectlmpi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/kubectlmpi"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
	tp "github.com/mpi-operator/mpi-operator/internal/testpod"
)

const (
	T = corev1.ConditionTrue
	F = corev1.ConditionFalse
)

func TestGetShowsPhaseWorkersAndRestarts(t *testing.T) {
	ns := newNamespace(t)
	now := metav1.Now().Time
	pi := createJob(t, ns, "pi", 2, map[string]string{kubectlmpi.AnnotationRestart: `{"replaces":"x","backoffLimit":6,"count":1,"cause":"worker Pod pi-worker-0 was disrupted (Evicted)"}`},
		condition(kubeflow.JobCreated, T, "MPIJobCreated", ""), condition(kubeflow.JobRunning, T, "MPIJobRunning", ""))
	createPod(t, tp.Worker(pi, 0).Scheduled("node-a", now).Running(now))
	createPod(t, tp.Worker(pi, 1).Scheduled("node-b", now))
	createJob(t, ns, "waiting", 3, nil)
	// Another namespace's job shows only with -A.
	other := newNamespace(t)
	createJob(t, other, "elsewhere", 1, nil, condition(kubeflow.JobCreated, T, "", ""))

	t.Run("table", func(t *testing.T) {
		out := mpi(t, "get", "-n", ns)
		t.Logf("kubectl mpi get:\n%s", out)
		got := rows(out)
		want := [][]string{
			{"NAME", "PHASE", "WORKERS", "RESTARTS", "AGE"},
			{"pi", "Running", "1/2", "1"},
			{"waiting", "Pending", "0/3", "0"},
		}
		if diff := cmp.Diff(want, dropAge(got)); diff != "" {
			t.Errorf("get (-want +got):\n%s", diff)
		}
	})
	t.Run("one job as JSON", func(t *testing.T) {
		var got kubectlmpi.JobSummaryList
		if err := json.Unmarshal([]byte(mpi(t, "get", "pi", "-n", ns, "-o", "json")), &got); err != nil {
			t.Fatal(err)
		}
		want := kubectlmpi.JobSummary{Namespace: ns, Name: "pi", Phase: "Running", WorkersRunning: 1, Workers: 2, Restarts: 1}
		if len(got.Items) != 1 {
			t.Fatalf("got %d items, want 1", len(got.Items))
		}
		got.Items[0].CreationTimestamp = metav1.Time{}
		if diff := cmp.Diff(want, got.Items[0]); diff != "" {
			t.Errorf("get -o json (-want +got):\n%s", diff)
		}
	})
	t.Run("all namespaces", func(t *testing.T) {
		var found []string
		for _, r := range rows(mpi(t, "get", "-A")) {
			if r[0] == ns || r[0] == other {
				found = append(found, strings.Join(r[:5], " "))
			}
		}
		want := []string{ns + " pi Running 1/2 1", ns + " waiting Pending 0/3 0", other + " elsewhere Created 0/1 0"}
		if other < ns {
			want = []string{want[2], want[0], want[1]}
		}
		if diff := cmp.Diff(want, found); diff != "" {
			t.Errorf("get -A (-want +got):\n%s", diff)
		}
	})
}

// dropAge removes the last column (AGE) of each data row.
func dropAge(rs [][]string) [][]string {
	for i := 1; i < len(rs); i++ {
		rs[i] = rs[i][:len(rs[i])-1]
	}
	return rs
}

func TestDescribeNamesTheFailedWorkerAndExitCode(t *testing.T) {
	ns := newNamespace(t)
	now := metav1.Now().Time
	msg := "worker Pod pi-worker-1 failed: container worker exited with code 3 (Error)"
	job := createJob(t, ns, "pi", 3, nil,
		condition(kubeflow.JobCreated, T, "MPIJobCreated", "MPIJob is created."),
		condition(kubeflow.JobRunning, F, "WorkerFailed", msg),
		condition(kubeflow.JobFailed, T, "WorkerFailed", msg))
	createPod(t, tp.Worker(job, 0).Scheduled("node-a", now).Running(now).Ready(now))
	createPod(t, tp.Worker(job, 1).Scheduled("node-b", now).Running(now).Exited(3, "Error", now))
	createPod(t, tp.Worker(job, 2).Scheduled("node-c", now).Running(now).Exited(0, "Completed", now))
	launcher := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: builder.LauncherName(job), Namespace: ns},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "launcher", Image: "mpi"}},
		}}},
	}
	if err := k8s.Create(context.Background(), launcher); err != nil {
		t.Fatal(err)
	}
	createPod(t, tp.Launcher(job, "abcde").Scheduled("node-a", now).Running(now))
	createEvent(t, job.Namespace, "pi.1", corev1.ObjectReference{Kind: kubeflow.Kind, APIVersion: kubeflow.GroupVersion.String(), Name: "pi", Namespace: ns, UID: job.UID},
		corev1.EventTypeWarning, "WorkerFailed", msg)
	createEvent(t, job.Namespace, "someone-else.1", corev1.ObjectReference{Kind: "Pod", Name: "pi-worker-1", Namespace: ns, UID: "not-the-job"},
		corev1.EventTypeNormal, "Pulled", "not the MPIJob's event")
	// An MPIJob of the same name deleted earlier: its events are not this one's.
	createEvent(t, job.Namespace, "pi.0", corev1.ObjectReference{Kind: kubeflow.Kind, APIVersion: kubeflow.GroupVersion.String(), Name: "pi", Namespace: ns, UID: "an-earlier-pi"},
		corev1.EventTypeWarning, "MPIJobFailed", "not the MPIJob's event")

	t.Run("text", func(t *testing.T) {
		out := mpi(t, "describe", "pi", "-n", ns)
		t.Logf("kubectl mpi describe pi:\n%s", out)
		for _, want := range [][]string{
			{"Phase:", "Failed"},
			{"Workers:", "1/3", "running"},
			{"pi-worker-1", "Failed", "false", "0", "node-b", "3", "(Error)"},
			{"pi-worker-2", "Succeeded", "false", "0", "node-c", "0", "(Completed)"},
			{"Launcher:", "Job", "pi-launcher", "(active", "0,", "succeeded", "0,", "failed", "0)"},
			{"pi-launcher-abcde", "Running"},
			{"Pod:", "pi-worker-1", "(worker)"},
			{"Exit:", "container", "worker", "exited", "with", "code", "3", "(Error)"},
			{"Warning", "WorkerFailed"},
		} {
			if !hasRow(out, want...) {
				t.Errorf("describe lacks a line starting %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "not the MPIJob's event") {
			t.Errorf("describe shows another object's event:\n%s", out)
		}
	})
	t.Run("yaml", func(t *testing.T) {
		var d kubectlmpi.Description
		if err := yaml.Unmarshal([]byte(mpi(t, "describe", "pi", "-n", ns, "-o", "yaml")), &d); err != nil {
			t.Fatal(err)
		}
		f := d.LastFailure
		if f == nil || f.Pod != "pi-worker-1" || f.Role != "worker" || f.ExitCode == nil || *f.ExitCode != 3 || f.Condition != "Failed" {
			t.Errorf("lastFailure = %+v, want worker Pod pi-worker-1, exit code 3, condition Failed", f)
		}
		var nodes []string
		for _, w := range d.WorkerPods {
			nodes = append(nodes, w.Node)
		}
		if diff := cmp.Diff([]string{"node-a", "node-b", "node-c"}, nodes); diff != "" {
			t.Errorf("worker nodes (-want +got):\n%s", diff)
		}
		if len(d.Events) != 1 || d.Events[0].Reason != "WorkerFailed" {
			t.Errorf("events = %+v, want the one WorkerFailed", d.Events)
		}
		var reached []string
		for _, s := range d.Startup {
			if s.Time != nil {
				reached = append(reached, s.Phase)
			}
		}
		want := []string{
			kubectlmpi.StepJobCreated, kubectlmpi.StepFirstWorkerPod, kubectlmpi.StepAllWorkerPods, kubectlmpi.StepWorkersScheduled,
			kubectlmpi.StepWorkersRunning, kubectlmpi.StepLauncherPod, kubectlmpi.StepLauncherRunning, kubectlmpi.StepFinishedCondition + " (Failed)",
		}
		if diff := cmp.Diff(want, reached); diff != "" {
			t.Errorf("startup steps reached (-want +got):\n%s", diff)
		}
	})
}

func createEvent(t *testing.T, ns, name string, about corev1.ObjectReference, typ, reason, msg string) {
	t.Helper()
	now := metav1.Now()
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns},
		InvolvedObject: about, Type: typ, Reason: reason, Message: msg, Count: 1,
		FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: "mpi-operator"},
	}
	if err := k8s.Create(context.Background(), e); err != nil {
		t.Fatal(err)
	}
}

func TestHostfilePrintsTheConfigMap(t *testing.T) {
	ns := newNamespace(t)
	job := testjob.MakeMPIJob("pi", ns).Workers(2).Defaulted()
	hostfile := builder.Hostfile(job, builder.Options{})
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: builder.ConfigMapName(job), Namespace: ns},
		Data:       map[string]string{builder.HostfileKey: hostfile, builder.DiscoverHostsKey: "#!/bin/sh\n"},
	}
	if err := k8s.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	if got := mpi(t, "hostfile", "pi", "-n", ns); got != hostfile {
		t.Errorf("hostfile = %q, want %q", got, hostfile)
	}
	var h kubectlmpi.Hostfile
	if err := json.Unmarshal([]byte(mpi(t, "hostfile", "pi", "-n", ns, "-o", "json")), &h); err != nil {
		t.Fatal(err)
	}
	want := kubectlmpi.Hostfile{Namespace: ns, Name: "pi", ConfigMap: "pi-config", Hosts: []string{"pi-worker-0.pi", "pi-worker-1.pi"}, Hostfile: hostfile}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("hostfile -o json (-want +got):\n%s", diff)
	}
}
