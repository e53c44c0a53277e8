package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// kueueAdmission is what Kueue writes into a pod template when it admits a
// job: a flavor's node selector and tolerations, a scheduling gate that
// the admission check will lift, and its own label and annotation.
func kueueAdmission(t *corev1.PodTemplateSpec, podSet string) {
	t.Spec.NodeSelector = map[string]string{"cloud.example/flavor": "spot"}
	t.Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	t.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/topology"}}
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels["kueue.x-k8s.io/podset"] = podSet
	t.Annotations = map[string]string{"kueue.x-k8s.io/workload": "wl-" + podSet}
}

func checkAdmitted(t *testing.T, what string, spec corev1.PodSpec, labels, annotations map[string]string, podSet string) {
	t.Helper()
	want := corev1.PodTemplateSpec{}
	kueueAdmission(&want, podSet)
	if diff := cmp.Diff(want.Spec.NodeSelector, spec.NodeSelector); diff != "" {
		t.Errorf("%s node selector (-want +got):\n%s", what, diff)
	}
	// The API server adds its default tolerations to Pods.
	if diff := cmp.Diff(want.Spec.Tolerations, spec.Tolerations[:min(1, len(spec.Tolerations))]); diff != "" {
		t.Errorf("%s tolerations (-want +got):\n%s", what, diff)
	}
	if diff := cmp.Diff(want.Spec.SchedulingGates, spec.SchedulingGates); diff != "" {
		t.Errorf("%s scheduling gates (-want +got):\n%s", what, diff)
	}
	if labels["kueue.x-k8s.io/podset"] != podSet || annotations["kueue.x-k8s.io/workload"] != "wl-"+podSet {
		t.Errorf("%s labels %v annotations %v lack Kueue's", what, labels, annotations)
	}
}

// suspendAndSettle suspends a job and plays the Job controller, which
// clears a suspended Job's startTime and active Pods.
func suspendAndSettle(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	updateJob(t, job, func(j *kubeflow.MPIJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) })
	waitCondition(t, job, kubeflow.JobSuspended, corev1.ConditionTrue)
	waitWorkers(t, job, 0)
	eventually(t, "launcher Job suspended", func(ctx context.Context) (bool, error) {
		l := launcherJob(t, job)
		return ptr.Deref(l.Spec.Suspend, false), fmt.Errorf("launcher suspend=%v", l.Spec.Suspend)
	})
	updateLauncherStatus(t, job, func(l *batchv1.Job) {
		l.Status.StartTime, l.Status.Active, l.Status.Ready = nil, 0, ptr.To[int32](0)
	})
}

func TestSuspendDeletesPodsAndResumeAppliesKueueDirectives(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("sus", ns).Workers(2).Obj())
	runWorkers(t, job, 2)
	launcherJob(t, job)
	startLauncher(t, job)
	before := waitCondition(t, job, kubeflow.JobRunning, corev1.ConditionTrue)

	suspendAndSettle(t, job)
	got := waitCondition(t, job, kubeflow.JobRunning, corev1.ConditionFalse)
	if c := condition(got, kubeflow.JobRunning); c.Reason != "MPIJobSuspended" {
		t.Errorf("Running condition reason while suspended = %q", c.Reason)
	}

	// startTime has a resolution of one second: resume only once the API's
	// whole-second clock has passed the first start, so a startTime reset
	// on resume is later than it.
	eventually(t, "a whole second past the first startTime", func(context.Context) (bool, error) {
		now := metav1.Now().Rfc3339Copy()
		return now.After(before.Status.StartTime.Time), fmt.Errorf("now %v, startTime %v", now, before.Status.StartTime)
	})
	updateJob(t, job, func(j *kubeflow.MPIJob) {
		kueueAdmission(&j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Template, "worker")
		kueueAdmission(&j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template, "launcher")
		j.Spec.RunPolicy.Suspend = ptr.To(false)
	})
	got = waitCondition(t, job, kubeflow.JobSuspended, corev1.ConditionFalse)
	if c := condition(got, kubeflow.JobSuspended); c.Reason != "MPIJobResumed" {
		t.Errorf("Suspended condition reason after resume = %q", c.Reason)
	}
	if !got.Status.StartTime.After(before.Status.StartTime.Time) {
		t.Errorf("startTime %v not reset on resume (was %v)", got.Status.StartTime, before.Status.StartTime)
	}
	for _, p := range waitWorkers(t, job, 2) {
		checkAdmitted(t, "worker Pod "+p.Name, p.Spec, p.Labels, p.Annotations, "worker")
	}
	var l *batchv1.Job
	eventually(t, "launcher Job resumed", func(ctx context.Context) (bool, error) {
		l = launcherJob(t, job)
		return !ptr.Deref(l.Spec.Suspend, false), nil
	})
	tmpl := l.Spec.Template
	checkAdmitted(t, "launcher Job template", tmpl.Spec, tmpl.Labels, tmpl.Annotations, "launcher")
}

func TestWaitForWorkersReadyHoldsLauncherAcrossSuspendAndResume(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("wait", ns).Workers(2).WaitForWorkers().Obj())
	pods := waitWorkers(t, job, 2)
	noLauncher := func(ctx context.Context) (bool, error) {
		exists, err := launcherExists(ctx, job)
		return !exists, err
	}
	consistently(t, "no launcher while workers are pending", time.Second, noLauncher)
	setPodPhase(t, &pods[0], corev1.PodRunning, true)
	setPodPhase(t, &pods[1], corev1.PodRunning, false)
	consistently(t, "no launcher while a worker is not Ready", time.Second, noLauncher)
	setPodPhase(t, &pods[1], corev1.PodRunning, true)
	if l := launcherJob(t, job); ptr.Deref(l.Spec.Suspend, false) {
		t.Fatal("launcher created suspended although every worker is Ready")
	}
	startLauncher(t, job)

	suspendAndSettle(t, job)
	updateJob(t, job, func(j *kubeflow.MPIJob) { j.Spec.RunPolicy.Suspend = ptr.To(false) })
	pods = waitWorkers(t, job, 2)
	launcherSuspended := func(ctx context.Context) (bool, error) {
		return ptr.Deref(launcherJob(t, job).Spec.Suspend, false), nil
	}
	consistently(t, "launcher kept suspended after resume until workers are Ready", time.Second, launcherSuspended)
	setPodPhase(t, &pods[0], corev1.PodRunning, true)
	consistently(t, "launcher kept suspended while one worker is not Ready", 500*time.Millisecond, launcherSuspended)
	setPodPhase(t, &pods[1], corev1.PodRunning, true)
	eventually(t, "launcher resumed once every worker is Ready", func(ctx context.Context) (bool, error) {
		ok, err := launcherSuspended(ctx)
		return !ok, err
	})
}

func TestCreatedSuspendedMakesNoPods(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("queued", ns).Workers(3).Suspend(true).Obj())
	waitCondition(t, job, kubeflow.JobSuspended, corev1.ConditionTrue)
	consistently(t, "no Pods and no launcher while suspended", time.Second, func(ctx context.Context) (bool, error) {
		pods, err := workerPods(ctx, job)
		if err != nil || len(pods) > 0 {
			return false, err
		}
		exists, err := launcherExists(ctx, job)
		return !exists, err
	})
	updateJob(t, job, func(j *kubeflow.MPIJob) { j.Spec.RunPolicy.Suspend = ptr.To(false) })
	waitWorkers(t, job, 3)
	launcherJob(t, job)
}
