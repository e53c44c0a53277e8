package controller

import (
	"context"
	"encoding/json"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
)

// AnnotationFailure, on an MPIJob, says which Pod failed it, and how
// (jobrecord.AnnotationFailure).
const AnnotationFailure = jobrecord.AnnotationFailure

// failureOf says how the Pod failed, in the structured form kubectl mpi
// reads. The condition messages say the same in prose (podFailure,
// attemptFailure).
func failureOf(pod *corev1.Pod) jobrecord.PodFailure {
	f := jobrecord.PodFailure{Pod: pod.Name, Role: pod.Labels[kubeflow.LabelJobRole]}
	if f.Role == "" {
		f.Role = builder.RoleWorker // goneWorker stands for a worker
	}
	if name, t, _ := failedRun(pod); t != nil {
		f.Container, f.ExitCode, f.Reason = name, ptr.To(t.ExitCode), t.Reason
	}
	if c := findPodCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue && f.Reason == "" {
		f.Reason = c.Reason
	}
	if f.Reason == "" {
		f.Reason = pod.Status.Reason
	}
	return f
}

// recordFailure writes which Pod fails the job onto the MPIJob, before the
// job is marked Failed and its Pods deleted: once they are gone, the
// record is what still says how the job failed.
func (r *Reconciler) recordFailure(ctx context.Context, job *kubeflow.MPIJob, pod *corev1.Pod) error {
	raw, err := json.Marshal(failureOf(pod))
	if err != nil {
		return fmt.Errorf("encoding failure record: %w", err)
	}
	if job.Annotations[AnnotationFailure] == string(raw) {
		return nil
	}
	if err := r.annotate(ctx, job, AnnotationFailure, string(raw)); err != nil {
		return fmt.Errorf("recording failure on MPIJob: %w", err)
	}
	return nil
}

// recordLauncherFailure records the launcher Pod whose failure fails the
// job: once the launcher Job is bound to fail (FailureTarget), and in the
// reconcile that marks the job Failed (updateProgress), before
// cleanupPods runs. The Job controller adds its Failed condition only once
// its Pods are gone, and deletes the Pod of a restartPolicy OnFailure
// launcher that used up backoffLimit: the record written at FailureTarget
// is then what still says how the attempt failed (recordedAttempt).
func (r *Reconciler) recordLauncherFailure(ctx context.Context, s *state, kids *children) error {
	failing := kids.launcher != nil && jobCondition(kids.launcher, batchv1.JobFailureTarget) != nil
	if isTrue(&s.job.Status, kubeflow.JobFailed) || !failing && !isTrue(s.status, kubeflow.JobFailed) {
		return nil
	}
	pod, _ := lastFailedAttempt(kids.launcherPods)
	if pod == nil {
		return nil
	}
	return r.recordFailure(ctx, s.job, pod)
}

// recordedAttempt says how the launcher attempt that the job's failure
// record names failed, as attemptFailure does; empty without one.
func recordedAttempt(job *kubeflow.MPIJob) string {
	f, ok := jobrecord.FailureOf(job)
	if !ok || f.Role != builder.RoleLauncher {
		return ""
	}
	if f.Container != "" && f.ExitCode != nil {
		return exitedWith(f.Pod, f.Container, *f.ExitCode, f.Reason)
	}
	return fmt.Sprintf("Pod %s failed: %s", f.Pod, f.Reason)
}
