package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
)

// leaseName is the operator's leader election Lease (cmd/mpi-operator).
const leaseName = "mpi-operator"

// operators keeps two operator processes running with leader election on
// one Lease, each a distinct identity (the process's own, made by
// controller-runtime), and restarts whichever dies: one is always there to
// take over. A slot is a place for one process; its metrics endpoint tells
// whether the process in it leads (mpi_operator_is_leader) and whether it
// has reconciled yet (controller_runtime_reconcile_total).
type operators struct {
	o          options
	kubeconfig string
	slots      []*slot
	wg         sync.WaitGroup
}

type slot struct {
	name, metrics, probe string
	log                  *os.File

	mu     sync.Mutex
	pid    int
	starts int
	// leading is when this process was first seen leading; zero if not.
	leading time.Time
	// working is when this process, leading, was first seen to have
	// reconciled a job; zero if not yet. A new leader first syncs its
	// caches, which takes several times longer with -race: a kill timed
	// from leading alone can stop every leader before it does any work.
	working time.Time
	// caughtUp is when this process, working, was first seen with an
	// empty queue: every job of its initial lists reconciled once. Zero
	// if not yet.
	caughtUp time.Time
}

// maxStarts bounds the restarts of one slot.
const maxStarts = 200

func startOperators(ctx context.Context, o options, kubeconfig string) (*operators, error) {
	ops := &operators{o: o, kubeconfig: kubeconfig}
	for i, name := range []string{"a", "b"} {
		f, err := os.OpenFile(filepath.Join(o.out, "operator-"+name+".log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, err
		}
		ops.slots = append(ops.slots, &slot{
			name:    name,
			metrics: fmt.Sprintf("127.0.0.1:%d", 18180+100*i),
			probe:   fmt.Sprintf("127.0.0.1:%d", 18181+100*i),
			log:     f,
		})
	}
	for _, s := range ops.slots {
		ops.wg.Go(func() { ops.keep(ctx, s) })
	}
	return ops, nil
}

// keep runs the slot's process again each time it exits, until ctx ends.
func (ops *operators) keep(ctx context.Context, s *slot) {
	for ctx.Err() == nil {
		s.mu.Lock()
		if s.starts >= maxStarts {
			s.mu.Unlock()
			return
		}
		s.starts++
		s.mu.Unlock()
		_, _ = fmt.Fprintf(s.log, "---- chaos: start %d at %s\n", s.starts, time.Now().Format(time.RFC3339Nano))
		cmd := exec.Command(ops.o.operator, "--kubeconfig", ops.kubeconfig,
			"--leader-elect=true", "--leader-election-namespace", benchcluster.OperatorNamespace,
			"--leader-elect-lease-duration", ops.o.leaseDuration.String(),
			"--leader-elect-renew-deadline", (ops.o.leaseDuration * 3 / 4).String(), "--leader-elect-retry-period", "1s",
			"--metrics-bind-address", s.metrics, "--health-probe-bind-address", s.probe)
		cmd.Stdout, cmd.Stderr = s.log, s.log
		// It dies with this program, whatever ends it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		started := time.Now()
		if err := cmd.Start(); err != nil {
			logf("operator %s: %v", s.name, err)
			return
		}
		s.mu.Lock()
		s.pid, s.leading, s.working, s.caughtUp = cmd.Process.Pid, time.Time{}, time.Time{}, time.Time{}
		s.mu.Unlock()
		done := make(chan struct{})
		go func() {
			_ = cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
		s.mu.Lock()
		s.pid = 0
		s.mu.Unlock()
		// A process that cannot start (the API server is down) exits at
		// once: its next start waits a little.
		if time.Since(started) < 2*time.Second {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// logs are the paths of the processes' logs.
func (ops *operators) logs() []string {
	var out []string
	for _, s := range ops.slots {
		out = append(out, s.log.Name())
	}
	return out
}

// wait waits for every process to end (cancel startOperators' ctx first).
func (ops *operators) wait() {
	ops.wg.Wait()
	for _, s := range ops.slots {
		_ = s.log.Close()
	}
}

// metricsState is what a process's metrics endpoint says of it.
type metricsState struct {
	leads bool
	// reconciles is the sum of controller_runtime_reconcile_total over
	// the mpijob controller's results.
	reconciles float64
	// queued is the mpijob controller's workqueue_depth, over its
	// priorities: the jobs waiting for a reconcile now.
	queued float64
}

// readMetrics asks a process's metrics endpoint whether it leads and how
// many reconciles it has done.
func readMetrics(ctx context.Context, addr string) metricsState {
	var m metricsState
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return m
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return m
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		m.add(sc.Text())
	}
	return m
}

// add takes one line of the Prometheus text format into m.
func (m *metricsState) add(line string) {
	line = strings.TrimSpace(line)
	switch {
	case line == "mpi_operator_is_leader 1":
		m.leads = true
	case strings.HasPrefix(line, "controller_runtime_reconcile_total{") && strings.Contains(line, `controller="mpijob"`):
		m.reconciles += sampleValue(line)
	case strings.HasPrefix(line, "workqueue_depth{") && strings.Contains(line, `name="mpijob"`):
		m.queued += sampleValue(line)
	}
}

// sampleValue is the value of one sample line; 0 if unreadable.
func sampleValue(line string) float64 {
	if i := strings.LastIndexByte(line, ' '); i > 0 {
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			return v
		}
	}
	return 0
}

// leader returns the slot whose process leads now, updating when each
// was first seen leading and first seen working.
func (ops *operators) leader(ctx context.Context) *slot {
	var found *slot
	for _, s := range ops.slots {
		s.mu.Lock()
		pid := s.pid
		s.mu.Unlock()
		var m metricsState
		if pid != 0 {
			m = readMetrics(ctx, s.metrics)
		}
		s.mu.Lock()
		switch {
		case !m.leads:
			s.leading, s.working, s.caughtUp = time.Time{}, time.Time{}, time.Time{}
		case s.leading.IsZero():
			s.leading = time.Now()
		}
		if m.leads && m.reconciles > 0 && s.working.IsZero() {
			s.working = time.Now()
		}
		if !s.working.IsZero() && m.queued == 0 && s.caughtUp.IsZero() {
			s.caughtUp = time.Now()
		}
		if m.leads {
			found = s
		}
		s.mu.Unlock()
	}
	return found
}

// waitLeader waits, bounded, for a process to lead.
func (ops *operators) waitLeader(ctx context.Context, bound time.Duration) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(bound)
	for {
		if ops.leader(ctx) != nil {
			return nil
		}
		select {
		case <-tick.C:
		case <-deadline:
			return fmt.Errorf("no operator became leader within %s (logs in %s)", bound, ops.o.out)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// killStats are the leader kills, how long each takeover took (from the
// SIGKILL to the next leader's first reconcile), and how long each leader
// took to catch up (from its first reconcile to its queue first empty).
type killStats struct {
	Kills     int
	Takeovers []time.Duration
	CatchUps  []time.Duration
}

// killLeaders kills the leader with SIGKILL a random time between
// killAfterMin and killAfter after it caught up, or killCatchUpMax after
// its first reconcile if it has not by then, at most o.kills times, until
// ctx ends. Timed from its election, kills stopped -race leaders while
// they synced their caches; timed from their first reconcile, they
// stopped them before they had reconciled every job once, so a job late
// in each new leader's queue waited through several leaders (make chaos,
// docs/records/chaos-findings.md). A killed leader cannot release the
// Lease: the other process takes over when the Lease expires
// (-lease-duration), which is the failover a crash causes.
func (ops *operators) killLeaders(ctx context.Context, e *env, rng *rand.Rand) killStats {
	var st killStats
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	hold := ops.o.killAfterMin + time.Duration(rng.Int64N(int64(ops.o.killAfter-ops.o.killAfterMin)+1))
	var killedAt, caughtUpSeen time.Time
	for st.Kills < ops.o.kills {
		select {
		case <-ctx.Done():
			return st
		case <-tick.C:
		}
		s := ops.leader(ctx)
		if s == nil {
			continue
		}
		s.mu.Lock()
		pid, leading, working, caughtUp := s.pid, s.leading, s.working, s.caughtUp
		s.mu.Unlock()
		if working.IsZero() || pid == 0 {
			continue
		}
		if !killedAt.IsZero() {
			st.Takeovers = append(st.Takeovers, working.Sub(killedAt))
			killedAt = time.Time{}
		}
		if !caughtUp.IsZero() && !caughtUp.Equal(caughtUpSeen) {
			st.CatchUps = append(st.CatchUps, caughtUp.Sub(working))
			caughtUpSeen = caughtUp
		}
		due := !caughtUp.IsZero() && time.Since(caughtUp) >= hold
		if !due && time.Since(working) < ops.o.killCatchUpMax {
			continue
		}
		holder := "?"
		if l, err := e.cs.CoordinationV1().Leases(benchcluster.OperatorNamespace).Get(ctx, leaseName, metav1.GetOptions{}); err == nil {
			holder = ptr.Deref(l.Spec.HolderIdentity, "")
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			continue
		}
		killedAt = time.Now()
		st.Kills++
		caught := "not caught up"
		if !caughtUp.IsZero() {
			caught = "caught up after " + caughtUp.Sub(working).Round(100*time.Millisecond).String()
		}
		logf("kill %d/%d: leader %s (pid %d, Lease holder %s) after %s leading, %s reconciling (%s)", st.Kills, ops.o.kills,
			s.name, pid, holder, time.Since(leading).Round(100*time.Millisecond), time.Since(working).Round(100*time.Millisecond), caught)
		hold = ops.o.killAfterMin + time.Duration(rng.Int64N(int64(ops.o.killAfter-ops.o.killAfterMin)+1))
	}
	return st
}

func (k killStats) summary() string {
	out := fmt.Sprintf("%d", k.Kills)
	if len(k.Takeovers) > 0 {
		out += " (takeover " + medianMax(k.Takeovers)
		if len(k.CatchUps) > 0 {
			out += "; caught up " + medianMax(k.CatchUps)
		}
		out += ")"
	}
	return out
}

// medianMax says "median M, max X" of ds.
func medianMax(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("median %s, max %s", s[len(s)/2].Round(100*time.Millisecond), s[len(s)-1].Round(100*time.Millisecond))
}
