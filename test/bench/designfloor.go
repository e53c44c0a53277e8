package main

import (
	"context"
	"fmt"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
)

// designFloor is the floor of the design rather than of bare Pods: a bare
// client, as the operator's ServiceAccount and within its limits, creates
// in namespace ns every object the design gives each of jobs jobs at once
// (the key Secret, the headless Service, the hostfile ConfigMap, one
// EndpointSlice, the workers and the launcher Job, whose Pod the Job
// controller makes), each as the operator's builders make it, and it
// returns the time until every Pod runs. What the operator adds to it is
// its own; what it adds to the bare-Pod floor is the design's: more
// objects, and fuller Pods, for the API server on the same cores. Status
// writes, events and the launcher's gate are left out, so it is a lower
// bound.
func (e *env) designFloor(ctx context.Context, ns string, jobs, workers int) (time.Duration, error) {
	if err := newNamespace(ctx, e.cs, ns); err != nil {
		return 0, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pt, err := watchPods(wctx, e.cs, ns, time.Now())
	if err != nil {
		return 0, err
	}
	perJob := workers + 5
	built := make([]*kubeflow.MPIJob, jobs)
	for j := range built {
		built[j] = designJob(ns, fmt.Sprintf("job-%d", j), workers)
	}
	start := time.Now()
	pt.mu.Lock()
	pt.start = start
	pt.mu.Unlock()
	err = benchcluster.Parallel(jobs*perJob, e.o.parallelism, func(i int) error {
		return e.createDesignObject(ctx, built[i/perJob], i%perJob)
	})
	if err != nil {
		return 0, fmt.Errorf("design floor: %w", err)
	}
	return e.allRunning(ctx, pt, ns, jobs*(workers+1), fmt.Sprintf("%d × %d, design floor", jobs, workers))
}

// designJob is the benchmark's MPIJob as the operator sees it, defaulted,
// for the builders. It is never created: its objects' owner references
// are dropped, or the garbage collector would delete them.
func designJob(ns, name string, workers int) *kubeflow.MPIJob {
	job := benchJob(ns, int32(workers))
	job.Name = name
	job.UID = types.UID(ns + "-" + name)
	kubeflow.SetDefaults(job)
	return job
}

// createDesignObject creates the k-th object of job: 0 to 4 are the
// Secret, Service, ConfigMap, EndpointSlice and launcher Job, the rest
// its workers.
func (e *env) createDesignObject(ctx context.Context, job *kubeflow.MPIJob, k int) error {
	ns, opts, create := job.Namespace, builder.Options{}, metav1.CreateOptions{}
	var err error
	switch k {
	case 0:
		// An ed25519 key in OpenSSH's format is about this size.
		s := builder.SSHSecret(job, make([]byte, 400), make([]byte, 100))
		s.OwnerReferences = nil
		_, err = e.floorCS.CoreV1().Secrets(ns).Create(ctx, s, create)
	case 1:
		s := builder.Service(job)
		s.OwnerReferences = nil
		_, err = e.floorCS.CoreV1().Services(ns).Create(ctx, s, create)
	case 2:
		c := builder.ConfigMap(job, nil, make([]byte, 100), opts)
		c.OwnerReferences = nil
		_, err = e.floorCS.CoreV1().ConfigMaps(ns).Create(ctx, c, create)
	case 3:
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: builder.ServiceName(job), Namespace: ns},
			AddressType: discoveryv1.AddressTypeIPv4,
		}
		slice.Labels = map[string]string{discoveryv1.LabelServiceName: builder.ServiceName(job)}
		_, err = e.floorCS.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, create)
	case 4:
		l := builder.LauncherJob(job, false, opts)
		l.OwnerReferences = nil
		_, err = e.floorCS.BatchV1().Jobs(ns).Create(ctx, l, create)
	default:
		p := builder.WorkerPod(job, k-5, opts)
		p.OwnerReferences = nil
		_, err = e.floorCS.CoreV1().Pods(ns).Create(ctx, p, create)
	}
	return err
}
