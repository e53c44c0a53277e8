// Command bench measures the operator on the benchmark cluster
// (hack/bench/up.sh: a real control plane with kwok nodes). It starts the
// operator as a separate process, as in production, with config/rbac's role
// as a ServiceAccount, and measures:
//   - the startup of one MPIJob of N workers, milestone by milestone,
//     against the floor of a bare client creating the same N+1 Pods with
//     the same client limits;
//   - the operator's writes per job by verb and resource, from the API
//     server's audit log;
//   - the throughput of many concurrent jobs against its floor;
//   - the operator's memory with unrelated Pods and idle MPIJobs.
//
// It prints one table per scenario, writes the raw results as JSON and a
// plot as PNG, and with -docs rewrites the generated part of a docs page.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
)

type options struct {
	kubeconfig, operator, out string
	auditLog, role            string
	docs, command             string
	operatorArgs              string
	parallelism               int
	sizes                     []int
	runs, nodes               int
	throughputJobs            int
	noise                     []int
	idleJobs                  int
	qps                       float64
	burst                     int
	// scale adds, per job, cleanPodPolicy All and the cleanup timings.
	scale bool
	// timeline prints each startup run's writes as the API server
	// received them.
	timeline bool
	// upstream is kubeflow/mpi-operator's binary, run after this operator
	// through the same startup and throughput scenarios (empty: skip).
	upstream       string
	peerRuns       int
	throughputRuns int
}

func main() {
	var o options
	var sizes, noise string
	// A flag set of its own: a package linked in (controller-runtime's
	// client config) registers its own -kubeconfig on the global one.
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "/var/lib/mpi-operator-bench/admin.conf", "kubeconfig of the benchmark cluster")
	fs.StringVar(&o.operator, "operator", "bin/mpi-operator", "operator binary, started as a separate process")
	fs.StringVar(&o.out, "out", "_output/bench", "folder for the raw results and the plot")
	fs.StringVar(&o.auditLog, "audit-log", "/var/lib/mpi-operator-bench/logs/audit.log", "the benchmark cluster's audit log")
	fs.StringVar(&o.role, "role", "config/rbac/role.yaml", "the ClusterRole the operator runs with")
	fs.StringVar(&o.docs, "docs", "", "page whose generated part gets this run's tables (empty: none)")
	fs.StringVar(&o.command, "command", "", "the command to name in the docs (default: this one)")
	fs.StringVar(&sizes, "sizes", "10,100,1000", "worker counts")
	fs.IntVar(&o.runs, "runs", 3, "runs per size")
	fs.IntVar(&o.nodes, "nodes", 1000, "kwok nodes")
	fs.StringVar(&noise, "noise", "", "unrelated Pod counts of the memory scenario, e.g. 0,10000,30000 (empty: skip)")
	fs.IntVar(&o.idleJobs, "idle-jobs", 0, "suspended MPIJobs of the memory scenario")
	fs.IntVar(&o.throughputJobs, "throughput-jobs", 0, "concurrent 8-worker jobs of the throughput scenario (0: skip)")
	fs.StringVar(&o.operatorArgs, "operator-args", "", "more flags for the operator, split on spaces")
	fs.IntVar(&o.parallelism, "create-parallelism", 150, "creations in flight, of the operator (per job) and of the floor client alike")
	fs.Float64Var(&o.qps, "qps", 500, "client QPS, of the operator and of the floor client alike")
	fs.IntVar(&o.burst, "burst", 1000, "client burst, of the operator and of the floor client alike")
	fs.StringVar(&o.upstream, "upstream", "", "kubeflow/mpi-operator's binary (hack/build-upstream.sh), measured after this one (empty: skip)")
	fs.IntVar(&o.peerRuns, "peer-runs", 1, "runs per size of each upstream configuration")
	fs.IntVar(&o.throughputRuns, "throughput-runs", 1, "runs of the throughput scenario (its median is the figure)")
	fs.BoolVar(&o.timeline, "timeline", false, "print where each run went: its Pods created, bound and Running, the operator's writes in order, and (throughput) every client's requests")
	fs.BoolVar(&o.scale, "scale", false, "jobs clean all Pods when done; time that and the MPIJob's deletion, and report CPU and memory per worker")
	_ = fs.Parse(os.Args[1:]) // ExitOnError: a bad flag exits
	for _, s := range strings.Split(sizes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad -sizes:", err)
			os.Exit(2)
		}
		o.sizes = append(o.sizes, n)
	}
	for _, s := range strings.Split(noise, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad -noise:", err)
			os.Exit(2)
		}
		o.noise = append(o.noise, n)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	progress("done")
}

type env struct {
	o           options
	cfg         *rest.Config
	operatorPID int
	cs          *kubernetes.Clientset
	// floorCS creates the floor's Pods as the operator's ServiceAccount.
	floorCS *kubernetes.Clientset
	c       client.WithWatch
	audit   benchcluster.AuditLog
	rep     *report
}

func run(ctx context.Context, o options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := kubeflow.AddToScheme(scheme); err != nil {
		return err
	}
	e := &env{o: o, cfg: cfg, audit: benchcluster.AuditLog(o.auditLog), rep: newReport()}
	if e.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if e.c, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if err := e.ensureNodes(ctx); err != nil {
		return err
	}
	stop, err := e.startOperator(ctx)
	if err != nil {
		return err
	}
	defer func() { stop() }()

	var all []startupResult
	for _, n := range o.sizes {
		progress("startup of one MPIJob of %d workers, %d runs", n, o.runs)
		var rows []startupResult
		for r := range o.runs {
			res, err := e.startup(ctx, n, r)
			if err != nil {
				return fmt.Errorf("startup N=%d run %d: %w", n, r, err)
			}
			if res.Floor, err = e.floor(ctx, n, r); err != nil {
				return fmt.Errorf("floor N=%d run %d: %w", n, r, err)
			}
			if res.DesignFloor, err = e.designFloor(ctx, fmt.Sprintf("design-floor-%d-%d", n, r), 1, n); err != nil {
				return fmt.Errorf("design floor N=%d run %d: %w", n, r, err)
			}
			rows = append(rows, res)
		}
		e.rep.startup(n, rows)
		all = append(all, rows...)
	}
	span := "creation to Succeeded"
	if o.scale {
		span = "creation until every child is gone after the MPIJob's deletion (cleanPodPolicy's deletes included)"
	}
	e.rep.requests(all, span)
	if o.scale {
		e.rep.scale(all)
	}
	if err := writeJSON(o.out, "startup.json", all); err != nil {
		return err
	}
	var tput []throughputResult
	for r := range o.throughputRuns {
		if o.throughputJobs == 0 {
			break
		}
		progress("throughput run %d: %d MPIJobs of 8 workers", r, o.throughputJobs)
		res, err := e.throughput(ctx, o.throughputJobs, 8)
		if err != nil {
			return fmt.Errorf("throughput run %d: %w", r, err)
		}
		tput = append(tput, res)
	}
	if len(tput) > 0 {
		e.rep.throughput(tput)
		if err := writeJSON(o.out, "throughput.json", tput); err != nil {
			return err
		}
	}
	if o.upstream != "" {
		// One operator at a time: this one stops while upstream runs,
		// before the memory scenario fills the cluster with Pods and
		// MPIJobs that upstream would list and reconcile.
		stop()
		progress("upstream's operator")
		peers, err := e.peer(ctx)
		if err != nil {
			return fmt.Errorf("upstream: %w", err)
		}
		e.rep.peer(o, all, tput, peers)
		if err := writeJSON(o.out, "upstream.json", peers); err != nil {
			return err
		}
		if stop, err = e.startOperator(ctx); err != nil {
			return err
		}
	}
	if len(o.noise) > 0 {
		progress("memory")
		samples, err := e.memory(ctx, o.noise, o.idleJobs)
		if err != nil {
			return fmt.Errorf("memory: %w", err)
		}
		e.rep.memory(samples)
		if err := writeJSON(o.out, "memory.json", samples); err != nil {
			return err
		}
	}
	return e.publish(all)
}

// progress prints when a scenario starts, so a run's log shows where
// its time went (make bench has a budget of 30 minutes).
func progress(format string, args ...any) {
	fmt.Printf("[%s] %s\n", time.Now().UTC().Format(time.TimeOnly), fmt.Sprintf(format, args...))
}

// publish draws the plot and, if asked, rewrites the docs' tables.
func (e *env) publish(all []startupResult) error {
	png := ""
	if len(all) > 0 {
		png = filepath.Join(e.o.out, "startup.png")
		if err := plotStartup(png, all); err != nil {
			return err
		}
		fmt.Println("\nplot:", png)
	}
	if e.o.docs == "" {
		return nil
	}
	command := e.o.command
	if command == "" {
		command = strings.Join(os.Args, " ")
	}
	link := ""
	if png != "" {
		// The plot sits beside the page, so the page shows it.
		link = strings.TrimSuffix(filepath.Base(e.o.docs), ".md") + "-startup.png"
		raw, err := os.ReadFile(png)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(e.o.docs), link), raw, 0o644); err != nil {
			return err
		}
	}
	return updateDocs(e.o.docs, command, link, e.rep.buf.String())
}

// ensureNodes makes the kwok nodes and waits until they are Ready.
func (e *env) ensureNodes(ctx context.Context) error {
	start := time.Now()
	err := benchcluster.EnsureNodes(ctx, e.cs, e.o.nodes)
	fmt.Printf("%d kwok nodes Ready in %s\n", e.o.nodes, time.Since(start).Round(time.Second))
	return err
}

// startOperator runs the operator binary against the cluster, with the
// same client limits as the floor client.
func (e *env) startOperator(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(e.o.out, 0o755); err != nil {
		return nil, err
	}
	// Appended to: the operator starts again after upstream has run.
	logf, err := os.OpenFile(filepath.Join(e.o.out, "operator.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(e.o.out, "operator.kubeconfig")
	if err := benchcluster.OperatorKubeconfig(ctx, e.cs, e.o.kubeconfig, e.o.role, kubeconfig); err != nil {
		return nil, err
	}
	fcfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	fcfg.QPS, fcfg.Burst = float32(e.o.qps), e.o.burst
	if e.floorCS, err = kubernetes.NewForConfig(fcfg); err != nil {
		return nil, err
	}
	args := append([]string{"--kubeconfig", kubeconfig, "--leader-elect=false",
		"--metrics-bind-address", "127.0.0.1:18080", "--health-probe-bind-address", "127.0.0.1:18081",
		"--pprof-bind-address", "127.0.0.1:18082",
		"--kube-api-qps", fmt.Sprint(e.o.qps), "--kube-api-burst", fmt.Sprint(e.o.burst),
		"--create-parallelism", fmt.Sprint(e.o.parallelism), "--zap-log-level", "error"},
		strings.Fields(e.o.operatorArgs)...)
	cmd := exec.CommandContext(ctx, e.o.operator, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the operator: %w", err)
	}
	e.operatorPID = cmd.Process.Pid
	// Once: run stops the operator before upstream's, and defers it too.
	stop := sync.OnceFunc(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		_ = logf.Close()
	})
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		out, err := exec.Command("curl", "-sf", "http://127.0.0.1:18081/readyz").Output()
		return err == nil && strings.TrimSpace(string(out)) == "ok", nil
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("operator not ready (log in %s): %w", logf.Name(), err)
	}
	return stop, nil
}

// newNamespace makes an empty namespace of that name.
func newNamespace(ctx context.Context, cs *kubernetes.Clientset, name string) error {
	if err := dropNamespace(ctx, cs, name); err != nil {
		return err
	}
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	return err
}

// dropNamespace removes a namespace and waits until it is gone, so the
// next measurement does not share the API server with its cleanup. Its
// Pods go first, at once (grace period 0, one request): the namespace
// controller alone would take a minute per 1000 Pods at its client limits.
func dropNamespace(ctx context.Context, cs *kubernetes.Clientset, name string) error {
	_ = cs.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})
	_ = cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s not gone: %w", name, err)
	}
	return nil
}

func benchPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			Containers:                   []corev1.Container{{Name: "c", Image: "bench"}},
			AutomountServiceAccountToken: ptr.To(false),
		},
	}
}

func writeJSON(dir, name string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), raw, 0o644)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func maxOf(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
