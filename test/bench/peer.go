package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
	"github.com/mpi-operator/mpi-operator/test/upstream"
)

// peerVersion is upstream's release, read from the folder
// hack/build-upstream.sh builds it into (upstream-<version>/mpi-operator).
func peerVersion(binary string) string {
	return strings.TrimPrefix(filepath.Base(filepath.Dir(binary)), "upstream-")
}

// peerConfig is one way of running kubeflow/mpi-operator (upstream).
type peerConfig struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
	// MaxWorkers is the largest startup job run with it (0: every size).
	MaxWorkers int `json:"maxWorkers,omitempty"`
	// MaxWait is how long a run waits for all its Pods to run before it
	// counts those that did (0: 20 minutes, then the run fails).
	MaxWait time.Duration `json:"maxWaitNs,omitempty"`
}

// defaultsMaxWorkers caps the startup jobs upstream runs at its defaults:
// its client creates 5 Pods a second, so one job of 1000 workers would
// take over 200 s, and make bench would no longer fit in 30 minutes. The
// throughput scenario (900 Pods) still runs at its defaults.
const defaultsMaxWorkers = 100

// defaultsMaxWait bounds each run of upstream at its defaults. Its 900
// Pods of the throughput scenario took 4 min 36-37 s to run (13:24 and
// 17:21 runs of 2026-12-05) and its MPIJobs never said Running; waiting
// for them alone had make bench at 30 min 1 s. A run past the bound
// reports how many Pods ran by then.
const defaultsMaxWait = 2 * time.Minute

// peerConfigs are upstream at its defaults (client QPS 5, burst 10, 2
// workers, a queue of 10 per second) and with those limits raised to what
// this operator runs with (QPS and burst as -qps and -burst).
func peerConfigs(o options) []peerConfig {
	return []peerConfig{
		{Name: "defaults", MaxWorkers: defaultsMaxWorkers, MaxWait: defaultsMaxWait},
		{Name: "limits raised", Args: []string{
			"--kube-api-qps", fmt.Sprint(int(o.qps)), "--kube-api-burst", fmt.Sprint(o.burst),
			"--threadiness", "50", "--controller-queue-rate-limit", "1000", "--controller-queue-burst", "2000",
		}},
	}
}

// peerRun is one job, or one throughput run, under upstream. Its Running
// condition waits on its shared event queue, so with launchers that
// complete 5 s after they run it may never appear: what counts is its
// Pods, all Running.
type peerRun struct {
	Config         string        `json:"config"`
	Jobs           int           `json:"jobs"`
	Workers        int           `json:"workersPerJob"`
	WorkersCreated time.Duration `json:"workersCreatedNs"`
	AllPodsRunning time.Duration `json:"allPodsRunningNs"`
	// JobsRunning is when every MPIJob said Running, 0 if not by 10 s
	// after its Pods.
	JobsRunning time.Duration `json:"jobsRunningNs"`
	// PodsRunning is how many of its Pods ran within its config's
	// MaxWait, when not all did (AllPodsRunning is then 0).
	PodsRunning int `json:"podsRunning,omitempty"`
	Pods        int `json:"pods"`
}

// peer runs each upstream configuration in turn, alone on the cluster,
// through startup (each size, -peer-runs runs) and throughput.
func (e *env) peer(ctx context.Context) ([]peerRun, error) {
	var out []peerRun
	for _, cfg := range peerConfigs(e.o) {
		stop, err := e.startPeer(ctx, cfg)
		if err != nil {
			return out, err
		}
		for _, n := range e.o.sizes {
			if cfg.MaxWorkers > 0 && n > cfg.MaxWorkers {
				continue
			}
			for r := range e.o.peerRuns {
				res, err := e.peerJobs(ctx, cfg, fmt.Sprintf("peer-%d-%d", n, r), 1, n)
				if err != nil {
					stop()
					return out, fmt.Errorf("upstream (%s) N=%d: %w", cfg.Name, n, err)
				}
				out = append(out, res)
			}
		}
		for r := range peerThroughputRuns(e.o, cfg) {
			res, err := e.peerJobs(ctx, cfg, fmt.Sprintf("peer-throughput-%d", r), e.o.throughputJobs, 8)
			if err != nil {
				stop()
				return out, fmt.Errorf("upstream (%s) throughput run %d: %w", cfg.Name, r, err)
			}
			out = append(out, res)
		}
		stop()
	}
	return out, nil
}

// peerThroughputRuns is how many times upstream runs the throughput
// scenario: as many times as this operator (its figure is then a median
// too), but once at its defaults, where a run takes its whole MaxWait.
func peerThroughputRuns(o options, cfg peerConfig) int {
	switch {
	case o.throughputJobs == 0:
		return 0
	case cfg.MaxWait > 0:
		return 1
	}
	return max(o.throughputRuns, 1)
}

// startPeer runs upstream's binary as its release deploys it: as a
// ServiceAccount of its own bound to the release's ClusterRole
// (peerKubeconfig), so that the API server's priority and fairness holds
// it at the workload-low level as it does this operator; the cluster's
// admin would be exempt, an advantage no deployment has. It gets a Lease
// namespace of its own so it leads at once, and it waits until its
// workers start.
func (e *env) startPeer(ctx context.Context, cfg peerConfig) (func(), error) {
	lockNS := "upstream-" + strings.ReplaceAll(cfg.Name, " ", "-")
	_, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lockNS}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	logPath := filepath.Join(e.o.out, lockNS+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := e.peerKubeconfig(ctx, lockNS)
	if err != nil {
		return nil, err
	}
	args := append([]string{"--kubeConfig", kubeconfig, "--lock-namespace", lockNS, "--monitoring-port", "0"}, cfg.Args...)
	cmd := exec.CommandContext(ctx, e.o.upstream, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting upstream: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
		_ = logf.Close()
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		select {
		case <-exited:
			return false, fmt.Errorf("upstream exited (log in %s)", logPath)
		default:
		}
		raw, _ := os.ReadFile(logPath)
		return strings.Contains(string(raw), "Started workers"), nil
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("upstream (%s) not started (log in %s): %w", cfg.Name, logPath, err)
	}
	fmt.Printf("upstream (%s) running: %s\n", cfg.Name, strings.Join(cfg.Args, " "))
	return stop, nil
}

// peerKubeconfig writes the kubeconfig upstream runs with, as
// benchcluster.UpstreamIdentity: its ClusterRole is read from the module of
// the release whose binary runs, so the two cannot drift apart.
func (e *env) peerKubeconfig(ctx context.Context, lockNS string) (string, error) {
	dir, err := upstream.ModuleDir(peerVersion(e.o.upstream))
	if err != nil {
		return "", fmt.Errorf("upstream's manifests: %w", err)
	}
	id, err := benchcluster.UpstreamIdentity(dir, lockNS)
	if err != nil {
		return "", err
	}
	path := filepath.Join(e.o.out, "upstream.kubeconfig")
	return path, id.Kubeconfig(ctx, e.cs, e.o.kubeconfig, path)
}

// peerJobs creates jobs MPIJobs of n workers at once in namespace ns and
// times them until all their Pods run.
func (e *env) peerJobs(ctx context.Context, cfg peerConfig, ns string, jobs, n int) (peerRun, error) {
	res := peerRun{Config: cfg.Name, Jobs: jobs, Workers: n}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pt, jt, _, err := e.startJobs(wctx, ns, jobs, n)
	if err != nil {
		return res, err
	}
	pods := jobs * (n + 1)
	res.Pods = pods
	maxWait := cmp.Or(cfg.MaxWait, 20*time.Minute)
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, maxWait, true, func(context.Context) (bool, error) {
		var ok bool
		res.AllPodsRunning, ok = pt.latest(pt.running, "*", pods)
		return ok, nil
	})
	res.WorkersCreated, _ = pt.latest(pt.seen, "worker", jobs*n)
	if err != nil && cfg.MaxWait > 0 && wait.Interrupted(err) && ctx.Err() == nil {
		res.AllPodsRunning, res.PodsRunning = 0, pt.count(pt.running, "*")
		return res, dropNamespace(ctx, e.cs, ns)
	}
	if err != nil {
		return res, fmt.Errorf("not all %d Pods Running: %w", pods, err)
	}
	// The Running condition, if it comes, comes soon after the Pods run.
	res.JobsRunning, _ = jt.wait(ctx, jt.running, jobs, 10*time.Second)
	return res, dropNamespace(ctx, e.cs, ns)
}
