package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
)

// Garbage collection of the deleted MPIJobs' children is waited for until
// it settles (no child removed for orphanSettle), at most orphanBound.
const (
	orphanSettle = 30 * time.Second
	orphanBound  = 10 * time.Minute
)

// run is one chaos run: set up, create the jobs while the chaos runs, wait
// for every job to be final, check, print. It reports whether every
// property held.
func run(ctx context.Context, o options) (bool, error) {
	e, err := newEnv(o)
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return false, err
	}
	// One stream per use, so that the plan does not depend on how many
	// choices the chaos made before a job was drawn.
	planRNG, chaosRNG, killRNG := newRand(o.seed, 1), newRand(o.seed, 2), newRand(o.seed, 3)
	jobs := plan(o, planRNG)
	planned := map[string]plannedJob{}
	big := ""
	for _, j := range jobs {
		planned[j.name] = j
		if int(j.workers) == o.bigWorkers {
			big = j.name
		}
	}
	logf("seed %d: %d MPIJobs (one of %d workers), created over %s", o.seed, len(jobs), o.bigWorkers, o.createOver)

	if err := benchcluster.EnsureNodes(ctx, e.cs, o.nodes); err != nil {
		return false, err
	}
	if err := freshNamespace(ctx, e); err != nil {
		return false, err
	}
	kubeconfig := filepath.Join(o.out, "operator.kubeconfig")
	if err := benchcluster.OperatorKubeconfig(ctx, e.cs, o.kubeconfig, o.role, kubeconfig); err != nil {
		return false, err
	}
	audit := benchcluster.AuditLog(o.auditLog)
	from, err := audit.End()
	if err != nil {
		return false, err
	}

	// Everything below ends with runCtx; the whole run is bounded by it.
	bound := o.createOver + o.deadline + orphanBound + 5*time.Minute
	runCtx, cancelRun := context.WithTimeout(ctx, bound)
	defer cancelRun()
	opCtx, stopOperators := context.WithCancel(runCtx)
	ops, err := startOperators(opCtx, o, kubeconfig)
	if err != nil {
		stopOperators()
		return false, err
	}
	defer func() {
		stopOperators()
		ops.wait()
	}()
	if err := ops.waitLeader(runCtx, 2*time.Minute); err != nil {
		return false, err
	}
	ob, err := newObserver(runCtx, e)
	if err != nil {
		return false, err
	}
	idle := newIdleWatch()
	idleCtx, stopIdle := context.WithCancel(runCtx)
	var idleDone sync.WaitGroup
	idleDone.Go(func() { idle.run(idleCtx, ob) })

	start := time.Now()
	chaosCtx, stopChaos := context.WithCancel(runCtx)
	var loops, resumes sync.WaitGroup
	var kills killStats
	var acts *actionStats
	var out outage
	var outErr error
	loops.Go(func() { kills = ops.killLeaders(chaosCtx, e, killRNG) })
	loops.Go(func() { acts = chaos(chaosCtx, runCtx, e, ob, chaosRNG, big, &resumes) })
	if o.apiserverRestartAt > 0 {
		loops.Go(func() {
			select {
			case <-chaosCtx.Done():
				return
			case <-time.After(o.apiserverRestartAt):
			}
			logf("restarting kube-apiserver")
			idle.pause()
			out, outErr = restartAPIServer(runCtx, e)
			idle.resume(ob, time.Now())
			logf("kube-apiserver ready again after %s", out.to.Sub(out.from).Round(100*time.Millisecond))
		})
	}
	createErr := createJobs(runCtx, e, jobs, start)
	lastCreated := time.Now()
	logf("all %d MPIJobs created; waiting for them to be final (at most %s)", len(jobs), o.deadline)
	allFinal := waitFinal(runCtx, ob, len(jobs), lastCreated.Add(o.deadline))
	finishedIn := time.Since(start)
	stopChaos()
	loops.Wait()
	resumes.Wait()
	stopIdle()
	idleDone.Wait()
	if createErr != nil {
		return false, createErr
	}
	if outErr != nil {
		return false, outErr
	}

	var list kubeflow.MPIJobList
	if err := e.c.List(runCtx, &list, client.InNamespace(namespace)); err != nil {
		return false, err
	}
	var got []*kubeflow.MPIJob
	for i := range list.Items {
		got = append(got, &list.Items[i])
	}
	r := &result{o: o, jobs: len(jobs), big: big, kills: kills, acts: acts, outage: out, finishedIn: finishedIn, allFinal: allFinal}
	r.right, r.states, r.wrong = finalStates(got, planned)
	if r.restarts, err = checkRestarts(runCtx, e, got, planned, acts.lostWhileRunning); err != nil {
		return false, err
	}
	r.idle, r.idleWhere = idle.result()
	logf("deleting the MPIJobs; waiting for garbage collection to settle (at most %s)", orphanBound)
	if r.orphans, err = orphans(runCtx, e, orphanSettle, orphanBound); err != nil {
		return false, err
	}
	// The operators' last requests reach the audit log within a second of
	// being answered; a stopped operator makes none.
	stopOperators()
	ops.wait()
	if r.pods, r.launchers, r.unreadable, err = creates(audit, from); err != nil {
		return false, err
	}
	if r.races, err = races(o.operator, ops.logs()); err != nil {
		return false, err
	}
	return r.print(os.Stdout), nil
}

// newRand is the seed's stream number n.
func newRand(seed int64, n uint64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), n)) }

// freshNamespace makes the run's namespace, empty.
func freshNamespace(ctx context.Context, e *env) error {
	_, err := e.cs.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	if err == nil {
		return fmt.Errorf("namespace %s exists: the run starts from an empty cluster (make chaos purges it)", namespace)
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	return err
}

// createJobs creates each job at its planned time after start. A create
// refused while the API server restarts is retried, bounded.
func createJobs(ctx context.Context, e *env, jobs []plannedJob, start time.Time) error {
	for _, j := range jobs {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(start.Add(j.at))):
		}
		var err error
		for range 60 {
			err = e.c.Create(ctx, j.mpiJob())
			if err == nil || apierrors.IsAlreadyExists(err) {
				err = nil
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
		if err != nil {
			return fmt.Errorf("creating MPIJob %s: %w", j.name, err)
		}
	}
	return nil
}

// waitFinal waits until n jobs are final in the cache, or the deadline.
func waitFinal(ctx context.Context, ob *observer, n int, deadline time.Time) bool {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := time.Now()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
		s, err := ob.snapshot(ctx)
		if err != nil {
			continue
		}
		done := 0
		for _, j := range s.jobs {
			if final(j) != "" {
				done++
			}
		}
		if done >= n {
			return true
		}
		if time.Since(last) > 15*time.Second {
			logf("%d/%d MPIJobs final", done, n)
			last = time.Now()
		}
	}
	return false
}
