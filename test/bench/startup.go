package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
)

// startupResult is one run of one job: each milestone as time since the
// MPIJob was created, and the floor for the same number of Pods.
type startupResult struct {
	Workers         int           `json:"workers"`
	Run             int           `json:"run"`
	WorkersCreated  time.Duration `json:"workersCreatedNs"`
	WorkersRunning  time.Duration `json:"workersRunningNs"`
	LauncherCreated time.Duration `json:"launcherCreatedNs"`
	JobRunning      time.Duration `json:"jobRunningNs"`
	Floor           time.Duration `json:"floorNs"`
	// DesignFloor is designFloor's for this one job: its objects, as the
	// builders make them, from a bare client.
	DesignFloor time.Duration `json:"designFloorNs"`
	// The operator's writes and CPU time over the job's whole life, to
	// Succeeded.
	Requests   requestCounts `json:"requests"`
	CPUSeconds float64       `json:"operatorCPUSeconds"`
	Reconciles float64       `json:"reconciles"`
	// PeakRSSMiB is the operator's peak RSS over the job's life.
	PeakRSSMiB float64 `json:"operatorPeakRSSMiB"`
	// With -scale: from Succeeded until cleanPodPolicy All has removed
	// every worker Pod, and from the MPIJob's deletion until every child
	// is gone.
	WorkersCleaned time.Duration `json:"workersCleanedNs,omitempty"`
	ChildrenGone   time.Duration `json:"childrenGoneNs,omitempty"`
}

// podTimes records, from a watch, when each Pod of a namespace was first
// seen and first seen Running.
type podTimes struct {
	mu      sync.Mutex
	start   time.Time
	seen    map[string]time.Duration
	running map[string]time.Duration
	// bound is when each Pod was first seen with a node.
	bound map[string]time.Duration
	role  map[string]string
	// live are the Pods that exist now, and lastGone when the last one of
	// them went.
	live     map[string]bool
	lastGone time.Time
}

func watchPods(ctx context.Context, cs *kubernetes.Clientset, ns string, start time.Time) (*podTimes, error) {
	pt := &podTimes{start: start, seen: map[string]time.Duration{}, running: map[string]time.Duration{}, bound: map[string]time.Duration{}, role: map[string]string{}, live: map[string]bool{}}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	record := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		now := time.Since(pt.start)
		pt.mu.Lock()
		defer pt.mu.Unlock()
		pt.live[pod.Name] = true
		if _, ok := pt.seen[pod.Name]; !ok {
			pt.seen[pod.Name] = now
			pt.role[pod.Name] = pod.Labels[kubeflow.LabelJobRole]
		}
		if _, ok := pt.bound[pod.Name]; !ok && pod.Spec.NodeName != "" {
			pt.bound[pod.Name] = now
		}
		if _, ok := pt.running[pod.Name]; !ok && pod.Status.Phase == corev1.PodRunning {
			pt.running[pod.Name] = now
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    record,
		UpdateFunc: func(_, obj any) { record(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				pt.mu.Lock()
				defer pt.mu.Unlock()
				delete(pt.live, pod.Name)
				pt.lastGone = time.Now()
			}
		},
	}); err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return pt, nil
}

// liveOf counts the Pods of the role that exist now, and returns when the
// last Pod went.
func (pt *podTimes) liveOf(role string) (int, time.Time) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	n := 0
	for name := range pt.live {
		if role == "*" || pt.role[name] == role {
			n++
		}
	}
	return n, pt.lastGone
}

// latest returns the time by which every Pod of the role matched, and
// whether n of them did.
func (pt *podTimes) latest(times map[string]time.Duration, role string, n int) (time.Duration, bool) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	var last time.Duration
	count := 0
	for name, t := range times {
		if role != "*" && pt.role[name] != role {
			continue
		}
		count++
		last = max(last, t)
	}
	return last, count >= n
}

// count is how many Pods of the role matched.
func (pt *podTimes) count(times map[string]time.Duration, role string) int {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	n := 0
	for name := range times {
		if role == "*" || pt.role[name] == role {
			n++
		}
	}
	return n
}

// phases says when the last of n Pods of the role was created, bound to a
// node and Running: where the time went.
func (pt *podTimes) phases(role string, n int) string {
	created, _ := pt.latest(pt.seen, role, n)
	bound, _ := pt.latest(pt.bound, role, n)
	running, _ := pt.latest(pt.running, role, n)
	pt.mu.Lock()
	var lags []time.Duration
	for name, b := range pt.bound {
		if r, ok := pt.running[name]; ok && (role == "*" || pt.role[name] == role) {
			lags = append(lags, r-b)
		}
	}
	pt.mu.Unlock()
	slices.Sort(lags)
	p := func(q float64) time.Duration {
		if len(lags) == 0 {
			return 0
		}
		return lags[int(q*float64(len(lags)-1))].Round(time.Millisecond)
	}
	return fmt.Sprintf("created %s, bound %s, Running %s; bound to Running p50 %s p90 %s max %s", created.Round(time.Millisecond),
		bound.Round(time.Millisecond), running.Round(time.Millisecond), p(0.5), p(0.9), p(1))
}

// startup creates one MPIJob of n workers and records its milestones.
func (e *env) startup(ctx context.Context, n, run int) (startupResult, error) {
	ns := fmt.Sprintf("startup-%d-%d", n, run)
	if err := newNamespace(ctx, e.cs, ns); err != nil {
		return startupResult{}, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	pt, err := watchPods(wctx, e.cs, ns, start)
	if err != nil {
		return startupResult{}, err
	}
	jt, err := watchJobs(wctx, e.cfg, ns, start)
	if err != nil {
		return startupResult{}, err
	}
	job := benchJob(ns, int32(n))
	from, err := e.audit.End()
	if err != nil {
		return startupResult{}, err
	}
	before, err := operatorUsage(ctx)
	if err != nil {
		return startupResult{}, fmt.Errorf("operator metrics: %w", err)
	}
	if err := resetPeakRSS(e.operatorPID); err != nil {
		return startupResult{}, err
	}
	if e.o.scale {
		job.Spec.RunPolicy.CleanPodPolicy = ptr.To(kubeflow.CleanPodPolicyAll)
	}
	start = time.Now()
	pt.mu.Lock()
	pt.start = start
	pt.mu.Unlock()
	jt.restart(start)
	if err := e.c.Create(ctx, job); err != nil {
		return startupResult{}, err
	}
	res := startupResult{Workers: n, Run: run}
	var ok bool
	if res.JobRunning, ok = jt.wait(ctx, jt.running, 1, 10*time.Minute); !ok {
		return res, fmt.Errorf("MPIJob never Running")
	}
	if res.WorkersCreated, ok = pt.latest(pt.seen, "worker", n); !ok {
		return res, fmt.Errorf("not all worker Pods seen")
	}
	res.WorkersRunning, _ = pt.latest(pt.running, "worker", n)
	res.LauncherCreated, _ = pt.latest(pt.seen, "launcher", 1)
	if e.o.timeline {
		fmt.Printf("  N=%d run %d, workers: %s\n", n, run, pt.phases("worker", n))
	}
	if _, ok := jt.wait(ctx, jt.succeeded, 1, 5*time.Minute); !ok {
		return res, fmt.Errorf("MPIJob %s never Succeeded", ns)
	}
	if e.o.scale {
		if err := e.cleanup(ctx, job, pt, &res); err != nil {
			return res, err
		}
	}
	time.Sleep(time.Second) // let the last writes reach the audit log
	if res.Requests, err = count(e.audit, from, ns); err != nil {
		return res, err
	}
	if e.o.timeline {
		if err := timeline(e.audit, from, ns, start); err != nil {
			return res, err
		}
	}
	after, err := operatorUsage(ctx)
	if err != nil {
		return res, err
	}
	spent := after.minus(before)
	res.CPUSeconds, res.Reconciles = spent.cpu, spent.reconciles
	if res.PeakRSSMiB, err = peakRSS(e.operatorPID); err != nil {
		return res, err
	}
	return res, dropNamespace(ctx, e.cs, ns)
}

// floor creates n+1 plain Pods as fast as the client limits allow (the
// operator's QPS, burst and creations in flight) and
// returns the time until all are Running: what the API server, scheduler
// and kwok need, with no operator in the way. It creates them as the
// operator's ServiceAccount, so both share the API server's priority and
// fairness level.
func (e *env) floor(ctx context.Context, n, run int) (time.Duration, error) {
	ns := fmt.Sprintf("floor-%d-%d", n, run)
	if err := newNamespace(ctx, e.cs, ns); err != nil {
		return 0, err
	}
	labels := map[string]string{"floor": "pod"}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	pt, err := watchPods(wctx, e.cs, ns, start)
	if err != nil {
		return 0, err
	}
	start = time.Now()
	pt.mu.Lock()
	pt.start = start
	pt.mu.Unlock()
	err = benchcluster.Parallel(n+1, e.o.parallelism, func(i int) error {
		pod := benchPod(ns, fmt.Sprintf("p-%d", i))
		pod.Labels = labels
		_, err := e.floorCS.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return 0, err
	}
	return e.allRunning(ctx, pt, ns, n+1, fmt.Sprintf("N=%d run %d, floor", n, run))
}

// allRunning waits, at most 10 minutes, until n Pods of the namespace ns
// that pt watches run, prints their phases under name with -timeline,
// drops the namespace and returns when the last one ran.
func (e *env) allRunning(ctx context.Context, pt *podTimes, ns string, n int, name string) (time.Duration, error) {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if t, ok := pt.latest(pt.running, "*", n); ok {
			if e.o.timeline {
				fmt.Printf("  %s: %s\n", name, pt.phases("*", n))
			}
			return t, dropNamespace(ctx, e.cs, ns)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0, fmt.Errorf("%s: Pods never all Running", name)
}

func benchJob(ns string, n int32) *kubeflow.MPIJob {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "bench"}}}}
	return &kubeflow.MPIJob{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns},
		Spec: kubeflow.MPIJobSpec{MPIReplicaSpecs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
			kubeflow.MPIReplicaTypeLauncher: {Replicas: ptr.To[int32](1), Template: tmpl},
			kubeflow.MPIReplicaTypeWorker:   {Replicas: ptr.To(n), Template: *tmpl.DeepCopy()},
		}},
	}
}
