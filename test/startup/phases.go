package main

import (
	"context"
	"net"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// phase names one step of a job's start, in the order they happen.
type phase string

const (
	phaseFirstWorker     phase = "first worker Pod created"
	phaseWorkersCreated  phase = "worker Pods created"
	phaseScheduled       phase = "worker Pods scheduled"
	phaseStarted         phase = "worker containers started"
	phaseSSHD            phase = "sshd listening on every worker"
	phasePublished       phase = "worker names published (EndpointSlices)"
	phaseLauncherCreated phase = "launcher Pod created"
	phaseNamesResolved   phase = "worker names resolvable (init container done)"
	phaseLauncherStarted phase = "launcher container started"
	phaseMpirunStarted   phase = "mpirun started (kubelet's log timestamp)"
	phaseFirstOutput     phase = "first rank output (kubelet's log timestamp)"
	phaseMpirunExited    phase = "mpirun exited (kubelet's log timestamp)"
	phaseLauncherExited  phase = "launcher container exited"
	phaseCriteriaMet     phase = "launcher Job SuccessCriteriaMet"
	phaseJobComplete     phase = "launcher Job Complete"
	phaseSucceeded       phase = "MPIJob Succeeded"
)

// phases in the order they are printed.
var phases = []phase{
	phaseFirstWorker, phaseWorkersCreated, phaseScheduled, phaseStarted, phaseSSHD, phasePublished,
	phaseLauncherCreated, phaseNamesResolved, phaseLauncherStarted,
	phaseMpirunStarted, phaseFirstOutput, phaseMpirunExited, phaseLauncherExited, phaseCriteriaMet, phaseJobComplete,
	phaseSucceeded,
}

// shortNames label a run's one-line summary.
var shortNames = map[phase]string{
	phaseFirstWorker: "first-worker", phaseWorkersCreated: "created", phaseScheduled: "scheduled", phaseStarted: "started",
	phaseSSHD: "sshd", phasePublished: "published", phaseLauncherCreated: "launcher-pod", phaseNamesResolved: "names",
	phaseLauncherStarted: "launcher", phaseMpirunStarted: "mpirun", phaseFirstOutput: "rank-output", phaseMpirunExited: "mpirun-exit",
	phaseLauncherExited: "exited", phaseCriteriaMet: "criteria-met",
	phaseJobComplete: "job-complete", phaseSucceeded: "succeeded",
}

// podWatch records, per Pod, when this process first saw each of its
// steps: the API's own timestamps have whole seconds only, too coarse
// for phases that take a fraction of one. Watch and clock are on the
// machine that runs the cluster, so the delay between a change and its
// event is the API server's fan-out, a few milliseconds.
type podWatch struct {
	start   time.Time
	sshPort int

	mu          sync.Mutex
	workers     map[string]map[phase]time.Duration
	launcher    map[phase]time.Duration
	dialing     map[string]bool
	launcherPod string
}

func newPodWatch(start time.Time, sshPort int) *podWatch {
	return &podWatch{
		start: start, sshPort: sshPort,
		workers: map[string]map[phase]time.Duration{}, launcher: map[phase]time.Duration{},
		dialing: map[string]bool{},
	}
}

// run watches the namespace's Pods until ctx ends.
func (w *podWatch) run(ctx context.Context, cs kubernetes.Interface, ns string) error {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	record := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			w.record(ctx, pod)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    record,
		UpdateFunc: func(_, obj any) { record(obj) },
	}); err != nil {
		return err
	}
	if _, err := f.Batch().V1().Jobs().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.recordJob(obj.(*batchv1.Job)) },
		UpdateFunc: func(_, obj any) { w.recordJob(obj.(*batchv1.Job)) },
	}); err != nil {
		return err
	}
	if _, err := f.Discovery().V1().EndpointSlices().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.recordSlice(obj.(*discoveryv1.EndpointSlice)) },
		UpdateFunc: func(_, obj any) { w.recordSlice(obj.(*discoveryv1.EndpointSlice)) },
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return nil
}

// recordSlice notes when each worker's address first appears, ready, in
// one of the job's EndpointSlices: from then on CoreDNS answers its name.
func (w *podWatch) recordSlice(sl *discoveryv1.EndpointSlice) {
	now := time.Since(w.start)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range sl.Endpoints {
		if e.TargetRef == nil || (e.Conditions.Ready != nil && !*e.Conditions.Ready) {
			continue
		}
		if seen := w.workers[e.TargetRef.Name]; seen != nil {
			mark(seen, phasePublished, now, true)
		}
	}
}

func (w *podWatch) record(ctx context.Context, pod *corev1.Pod) {
	now := time.Since(w.start)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch pod.Labels[kubeflow.LabelJobRole] {
	case builder.RoleWorker:
		seen := w.workers[pod.Name]
		if seen == nil {
			seen = map[phase]time.Duration{phaseWorkersCreated: now}
			w.workers[pod.Name] = seen
		}
		mark(seen, phaseScheduled, now, pod.Spec.NodeName != "")
		mark(seen, phaseStarted, now, running(pod.Status.ContainerStatuses))
		// Dial only once the kubelet says the container runs: dialling
		// every 10 ms from the moment the Pod has an address (20 workers,
		// 2000 refused connections a second) slowed the kubelets' container
		// starts twofold on the 2 cores it measured.
		if pod.Status.PodIP != "" && running(pod.Status.ContainerStatuses) && !w.dialing[pod.Name] {
			w.dialing[pod.Name] = true
			go w.dial(ctx, pod.Name, net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(w.sshPort)))
		}
	case builder.RoleLauncher:
		w.launcherPod = pod.Name
		mark(w.launcher, phaseLauncherCreated, now, true)
		mark(w.launcher, phaseNamesResolved, now, initDone(pod.Status.InitContainerStatuses))
		mark(w.launcher, phaseLauncherStarted, now, running(pod.Status.ContainerStatuses))
		mark(w.launcher, phaseLauncherExited, now, exited(pod.Status.ContainerStatuses))
	}
}

// recordJob notes the launcher Job's conditions as they come.
func (w *podWatch) recordJob(job *batchv1.Job) {
	now := time.Since(w.start)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobSuccessCriteriaMet:
			mark(w.launcher, phaseCriteriaMet, now, true)
		case batchv1.JobComplete:
			mark(w.launcher, phaseJobComplete, now, true)
		}
	}
}

// dial connects to a worker's sshd until it answers: the earliest this
// process could have after it saw the container start, give or take the
// 10 ms between tries.
func (w *podWatch) dial(ctx context.Context, pod, addr string) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = conn.Close()
			now := time.Since(w.start)
			w.mu.Lock()
			mark(w.workers[pod], phaseSSHD, now, true)
			w.mu.Unlock()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// mark sets p's time once, the first time cond holds.
func mark(seen map[phase]time.Duration, p phase, now time.Duration, cond bool) {
	if _, ok := seen[p]; !ok && cond {
		seen[p] = now
	}
}

func running(statuses []corev1.ContainerStatus) bool {
	for _, s := range statuses {
		if s.State.Running != nil || s.State.Terminated != nil {
			return true
		}
	}
	return false
}

func exited(statuses []corev1.ContainerStatus) bool {
	for _, s := range statuses {
		if s.State.Terminated != nil {
			return true
		}
	}
	return false
}

func initDone(statuses []corev1.ContainerStatus) bool {
	if len(statuses) == 0 {
		return false
	}
	for _, s := range statuses {
		if s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 {
			return false
		}
	}
	return true
}

// times is each phase's end, measured from the MPIJob's create: for a
// worker phase, when the last of n workers reached it.
func (w *podWatch) times(n int) map[phase]time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[phase]time.Duration{}
	for _, p := range []phase{phaseWorkersCreated, phaseScheduled, phaseStarted, phaseSSHD, phasePublished} {
		var last time.Duration
		count := 0
		for _, seen := range w.workers {
			if t, ok := seen[p]; ok {
				count++
				last = max(last, t)
			}
		}
		if count >= n {
			out[p] = last
		}
	}
	for _, seen := range w.workers {
		if t, ok := out[phaseFirstWorker]; !ok || seen[phaseWorkersCreated] < t {
			out[phaseFirstWorker] = seen[phaseWorkersCreated]
		}
	}
	for p, t := range w.launcher {
		out[p] = t
	}
	return out
}
