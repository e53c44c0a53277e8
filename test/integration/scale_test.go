package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func hostfileLines(ctx context.Context, job *kubeflow.MPIJob, key string) ([]string, error) {
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: job.Name + "-config"}, cm); err != nil {
		return nil, err
	}
	if key == builder.DiscoverHostsKey {
		return builder.DiscoveredHosts(cm.Data[key]), nil
	}
	return strings.Split(strings.TrimSpace(cm.Data[key]), "\n"), nil
}

func TestScaleSubresourceAddsAndRemovesWorkers(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("elastic", ns).Workers(2).Obj())
	runWorkers(t, job, 2)
	launcherJob(t, job)
	startLauncher(t, job)
	waitCondition(t, job, kubeflow.JobRunning, corev1.ConditionTrue)

	// What `kubectl scale mpijob/elastic --replicas=4` does.
	scale := &autoscalingv1.Scale{}
	ctx := context.Background()
	if err := k8s.SubResource("scale").Get(ctx, job, scale); err != nil {
		t.Fatalf("reading the scale subresource: %v", err)
	}
	if scale.Spec.Replicas != 2 || scale.Status.Replicas != 2 || !strings.Contains(scale.Status.Selector, "job-role=worker") {
		t.Errorf("scale = %+v", scale)
	}
	scale.Spec.Replicas = 4
	if err := k8s.SubResource("scale").Update(ctx, job, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("scaling up: %v", err)
	}
	pods := waitWorkers(t, job, 4)
	eventually(t, "hostfile with 4 workers", func(ctx context.Context) (bool, error) {
		lines, err := hostfileLines(ctx, job, "hostfile")
		return len(lines) == 4 && strings.HasPrefix(lines[3], "elastic-worker-3."), fmt.Errorf("hostfile %q: %w", lines, err)
	})
	for _, p := range pods {
		if p.Status.Phase == corev1.PodPending {
			setPodPhase(t, &p, corev1.PodRunning, true)
		}
	}
	eventually(t, "discover_hosts.sh lists the 4 running workers", func(ctx context.Context) (bool, error) {
		lines, err := hostfileLines(ctx, job, "discover_hosts.sh")
		return len(lines) == 4 && strings.HasPrefix(lines[3], "elastic-worker-3."), fmt.Errorf("script lists %q: %w", lines, err)
	})

	updateJob(t, job, func(j *kubeflow.MPIJob) {
		one := int32(1)
		j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Replicas = &one
	})
	pods = waitWorkers(t, job, 1)
	if pods[0].Name != "elastic-worker-0" {
		t.Errorf("kept worker %s, want elastic-worker-0", pods[0].Name)
	}
	eventually(t, "hostfile and discover_hosts.sh with 1 worker", func(ctx context.Context) (bool, error) {
		hosts, err := hostfileLines(ctx, job, "hostfile")
		if err != nil {
			return false, err
		}
		script, err := hostfileLines(ctx, job, "discover_hosts.sh")
		return len(hosts) == 1 && len(script) == 1, fmt.Errorf("hostfile %q script lists %q: %w", hosts, script, err)
	})
}
