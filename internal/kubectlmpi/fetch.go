package kubectlmpi

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// getJob reads one MPIJob.
func getJob(ctx context.Context, c client.Reader, namespace, name string) (*kubeflow.MPIJob, error) {
	job := &kubeflow.MPIJob{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, job); err != nil {
		return nil, fmt.Errorf("reading MPIJob %s/%s: %w", namespace, name, err)
	}
	return job, nil
}

// jobPods lists the job's Pods by the labels the operator (and upstream's)
// gives them, split into workers and launchers. Every launcher Pod is
// listed, whichever launcher Job made it: a whole-job restart replaces the
// Job, and the old one's Pods may linger while they terminate.
func jobPods(ctx context.Context, c client.Reader, job *kubeflow.MPIJob) (workers, launchers []corev1.Pod, err error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels(builder.JobLabels(job))); err != nil {
		return nil, nil, fmt.Errorf("listing the Pods of MPIJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	for _, p := range pods.Items {
		switch p.Labels[kubeflow.LabelJobRole] {
		case builder.RoleWorker:
			workers = append(workers, p)
		case builder.RoleLauncher:
			launchers = append(launchers, p)
		}
	}
	return workers, launchers, nil
}

// fetchObjects reads everything describe shows of a job.
func fetchObjects(ctx context.Context, c client.Reader, namespace, name string) (Objects, error) {
	job, err := getJob(ctx, c, namespace, name)
	if err != nil {
		return Objects{}, err
	}
	o := Objects{Job: job}
	if o.Workers, o.LauncherPods, err = jobPods(ctx, c, job); err != nil {
		return Objects{}, err
	}
	// The current attempt's launcher Job is named for the restarts
	// recorded; an operator from before that named every one upstream's
	// way.
	for _, name := range []string{builder.LauncherJobName(job, restartOf(job).Count), builder.LauncherName(job)} {
		l := &batchv1.Job{}
		err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, l)
		if err == nil {
			o.LauncherJob = l
			break
		}
		if !apierrors.IsNotFound(err) {
			return Objects{}, fmt.Errorf("reading the launcher Job: %w", err)
		}
	}
	var events corev1.EventList
	if err := c.List(ctx, &events, client.InNamespace(namespace), client.MatchingFields{
		"involvedObject.uid": string(job.UID),
	}); err != nil {
		return Objects{}, fmt.Errorf("listing the events of MPIJob %s/%s: %w", namespace, name, err)
	}
	o.Events = events.Items
	return o, nil
}
