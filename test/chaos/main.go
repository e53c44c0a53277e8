// Command chaos runs many MPIJobs on the benchmark cluster
// (hack/bench/up.sh: a real control plane on loopback with kwok nodes)
// while it breaks things: the leader of two operator processes is killed
// again and again, the API server is restarted once, worker Pods are
// deleted and evicted, and jobs are suspended and resumed. Then it checks
// properties, never wall-clock times:
//   - every job reached its right final state (Succeeded, or Failed for
//     the jobs whose simulated mpirun exits 1) within a bounded deadline;
//   - the operator never tried to create a Pod or a launcher Job while one
//     of that name still existed (from the API server's audit log);
//   - after the MPIJobs are deleted, garbage collection leaves no child;
//   - no job had work left for the operator and saw nothing happen for
//     longer than the idle bound (30 s);
//   - a restart's record names the backoffLimit its successor launcher Job
//     got, and a job that succeeds lost no retry to a lost worker.
//
// docs/records/chaos.md defines each figure. Every loop is bounded in count and
// time and the program stops by itself; it refuses a cluster that is not
// on loopback. -seed reproduces the plan of jobs and the chaos's choices.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

type options struct {
	kubeconfig, operator, out string
	auditLog, role, benchDir  string
	seed                      int64
	nodes                     int
	jobs, bigWorkers          int
	failEvery                 int
	createOver                time.Duration
	runMin, runMax            time.Duration
	kills                     int
	leaseDuration             time.Duration
	killAfterMin, killAfter   time.Duration
	killCatchUpMax            time.Duration
	apiserverRestartAt        time.Duration
	deletes, evictions        int
	suspends                  int
	actionEvery               time.Duration
	deadline                  time.Duration
	idleBound                 time.Duration
}

func main() {
	var o options
	// A FlagSet of its own: controller-runtime, imported for the
	// restart annotation's name, defines -kubeconfig on the global one.
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "/var/lib/mpi-operator-bench/admin.conf", "kubeconfig of the benchmark cluster")
	fs.StringVar(&o.benchDir, "bench-dir", "/var/lib/mpi-operator-bench", "the benchmark cluster's directory (pid files, logs)")
	fs.StringVar(&o.operator, "operator", "bin/mpi-operator", "operator binary; two are run with leader election")
	fs.StringVar(&o.out, "out", "_output/chaos", "folder for the operators' logs and the results")
	fs.StringVar(&o.auditLog, "audit-log", "/var/lib/mpi-operator-bench/logs/audit.log", "the benchmark cluster's audit log")
	fs.StringVar(&o.role, "role", "config/rbac/role.yaml", "the ClusterRole the operators run with")
	fs.Int64Var(&o.seed, "seed", 0, "seed of the plan and of the chaos's choices (0: from the clock)")
	fs.IntVar(&o.nodes, "nodes", 100, "kwok nodes")
	fs.IntVar(&o.jobs, "jobs", 200, "MPIJobs, the big one included")
	fs.IntVar(&o.bigWorkers, "big-workers", 1000, "workers of the one big job")
	fs.IntVar(&o.failEvery, "fail-every", 7, "one job in this many is made to fail (its mpirun exits 1)")
	fs.DurationVar(&o.createOver, "create-over", 3*time.Minute, "the jobs are created spread over this long")
	fs.DurationVar(&o.runMin, "run-min", 20*time.Second, "shortest simulated mpirun")
	fs.DurationVar(&o.runMax, "run-max", 60*time.Second, "longest simulated mpirun")
	fs.IntVar(&o.kills, "kills", 15, "leader kills (SIGKILL)")
	fs.DurationVar(&o.leaseDuration, "lease-duration", 8*time.Second, "the operators' --leader-elect-lease-duration; their renew deadline is 3/4 of it, their retry period 1 s")
	fs.DurationVar(&o.killAfterMin, "kill-after-min", 2*time.Second, "a leader is killed at least this long after it caught up (its queue first empty)")
	fs.DurationVar(&o.killAfter, "kill-after", 8*time.Second, "and at most this long")
	fs.DurationVar(&o.killCatchUpMax, "kill-catch-up-max", 30*time.Second, "a leader that has not caught up this long after its first reconcile is killed then")
	fs.DurationVar(&o.apiserverRestartAt, "apiserver-restart-at", 100*time.Second, "when the API server is restarted, after the first job (0: never)")
	fs.IntVar(&o.deletes, "deletes", 60, "worker Pods deleted")
	fs.IntVar(&o.evictions, "evictions", 40, "worker Pods evicted")
	fs.IntVar(&o.suspends, "suspends", 30, "jobs suspended, each resumed 3 to 12 s later")
	fs.DurationVar(&o.actionEvery, "action-every", 2*time.Second, "one chaos action (delete, evict or suspend) this often")
	fs.DurationVar(&o.deadline, "deadline", 12*time.Minute, "every job must be final this long after the last was created")
	fs.DurationVar(&o.idleBound, "idle-bound", 30*time.Second, "longest a job may have work left with nothing happening")
	_ = fs.Parse(os.Args[1:])
	// The cache's watches log through controller-runtime; their warnings
	// while the API server restarts are expected.
	ctrllog.SetLogger(logr.Discard())
	if o.seed == 0 {
		o.seed = time.Now().UnixNano() % 1_000_000
	}
	ok, err := run(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// env is what the parts of a run share.
type env struct {
	o   options
	cfg *rest.Config
	cs  *kubernetes.Clientset
	c   client.WithWatch
}

func newEnv(o options) (*env, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return nil, err
	}
	if err := onLoopback(cfg.Host); err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := kubeflow.AddToScheme(scheme); err != nil {
		return nil, err
	}
	e := &env{o: o, cfg: cfg}
	if e.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if e.c, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	return e, nil
}

// onLoopback refuses any API server but one on this machine's loopback:
// the chaos deletes Pods and kills processes.
func onLoopback(host string) error {
	u, err := url.Parse(host)
	if err != nil {
		return fmt.Errorf("API server address %q: %w", host, err)
	}
	ip := net.ParseIP(u.Hostname())
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("API server %s is not on loopback: chaos runs only against the benchmark cluster", host)
	}
	return nil
}

// logf prints a timestamped progress line on stderr; the figures go to
// stdout.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, ">> [%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
