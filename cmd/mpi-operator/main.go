// Command mpi-operator runs the MPIJob controller. It only wires things
// together: flags, the client, the cache, leader election, health and
// metrics endpoints; the logic lives in internal/controller.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/controller"
	"github.com/mpi-operator/mpi-operator/internal/gang"
	"github.com/mpi-operator/mpi-operator/internal/version"
)

// leaseName is upstream's: an operator swap then hands over the lease
// instead of letting both operators act at once.
const leaseName = "mpi-operator"

type options struct {
	metricsAddr, probeAddr, pprofAddr string
	leaderElect                       bool
	leaderElectionNS                  string
	leaseDuration, renewDeadline      time.Duration
	retryPeriod                       time.Duration
	namespaces                        string
	clusterDomain                     string
	qps                               float64
	burst                             int
	concurrency                       int
	createParallelism                 int
	queueQPS                          float64
	queueBurst                        int
	gangScheduling                    string
	avoidLostNodeFor                  time.Duration
	dnsCachesDenials                  string
	// Filled from the environment, not flags.
	searchDomain string
}

// bindFlags defines the operator's flags on fs, with their defaults.
func bindFlags(fs *flag.FlagSet, o *options) {
	// Defaults are sized for a 1000-worker job: one reconcile creates its
	// Pods in a few seconds instead of the minutes a 5 requests/s client
	// needs; the API server's priority and fairness still protects it.
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "Address of the Prometheus metrics endpoint; 0 disables it.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", "Address of the Go profiler's /debug/pprof endpoints; empty disables it (the default).")
	fs.BoolVar(&o.leaderElect, "leader-elect", true, "Elect a leader, so that several replicas can run and only one acts.")
	fs.StringVar(&o.leaderElectionNS, "leader-election-namespace", "", "Namespace of the leader election Lease (default: the operator's own).")
	// kube-controller-manager's names and defaults. A leader that dies
	// without releasing the Lease leaves the jobs waiting for it to
	// expire: a shorter duration takes over sooner, at the cost of more
	// renewals.
	fs.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a standby waits, after the leader's last renewal, before it takes the Lease.")
	fs.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew the Lease before it stops leading; less than the lease duration.")
	fs.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "Interval between attempts to take or renew the Lease.")
	// Upstream's default scope comes from the same variable.
	fs.StringVar(&o.namespaces, "namespace", os.Getenv("KUBEFLOW_NAMESPACE"), "Comma-separated namespaces to watch; empty watches all (default: $KUBEFLOW_NAMESPACE).")
	fs.StringVar(&o.clusterDomain, "cluster-domain", "", "DNS domain of the cluster. When set, hostfile entries are fully qualified with it; unset, they are <pod>.<job>, which resolves on any cluster.")
	fs.Float64Var(&o.qps, "kube-api-qps", 500, "Sustained requests per second to the API server, all of the operator's clients together (leader election has a budget of its own); 0 or less: no client-side limit.")
	fs.IntVar(&o.burst, "kube-api-burst", 1000, "Burst of requests to the API server, shared as --kube-api-qps is.")
	// A job's first reconcile makes its children one request after
	// another; with 100 jobs submitted at once, 10 at a time left their
	// workers created only after 19 s, 50 at a time after 12 s (make bench).
	fs.IntVar(&o.concurrency, "concurrency", 50, "MPIJobs reconciled at once.")
	// 500 in flight from one ServiceAccount overflowed the API server's
	// default priority-and-fairness queues (429s, retried after 1 s) in
	// make bench; 150 did not, and was as fast.
	fs.IntVar(&o.createParallelism, "create-parallelism", 150, "Pod creations in flight for one MPIJob.")
	// Upstream's names; the defaults are controller-runtime's own.
	fs.Float64Var(&o.queueQPS, "controller-queue-rate-limit", 10, "Reconciles per second the work queue lets through overall.")
	fs.IntVar(&o.queueBurst, "controller-queue-burst", 100, "Burst of the work queue's overall rate limit.")
	fs.StringVar(&o.gangScheduling, "gang-scheduling", "", gang.FlagUsage)
	fs.StringVar(&o.dnsCachesDenials, "dns-caches-denials", "auto", "Whether the cluster's DNS keeps a name's NXDOMAIN for a while after the name is made (kubeadm's Corefile before Kubernetes 1.32, NodeLocal DNSCache): true makes each launcher ask for its workers' names only once the operator has published them all; auto asks the cluster's DNS at startup. An MPIJob's annotation "+builder.AnnotationDNSCachesDenials+" overrides it.")
	fs.DurationVar(&o.avoidLostNodeFor, "avoid-lost-node-for", 10*time.Minute, "How long a job restarted after losing a worker with its node (NotReady, unreachable, evicted by the kubelet, gone) keeps its Pods off that node; 0 does not.")
}

func main() {
	var o options
	fs := flag.CommandLine
	bindFlags(fs, &o)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	up := bindUpstreamFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if up.printVersion {
		fmt.Println("mpi-operator", version.Version)
		return
	}
	notes := up.apply(fs, &o, &zapOpts)
	logger := zap.New(zap.UseFlagOptions(&zapOpts))
	ctrl.SetLogger(logger)
	// client-go logs through klog; send it the same way.
	klog.SetLogger(logger)
	for _, n := range notes {
		ctrl.Log.Info(n)
	}
	o.searchDomain = clusterDomainFromResolvConf("/etc/resolv.conf")

	if err := run(o, up); err != nil {
		ctrl.Log.Error(err, "mpi-operator stopped")
		os.Exit(1)
	}
}

func run(o options, up *upstreamFlags) error {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflow.AddToScheme(scheme))
	gangScheduler, err := gang.New(o.gangScheduling, scheme)
	if err != nil {
		return err
	}

	cfg, err := up.restConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg, leaderCfg := clientConfigs(cfg, float32(o.qps), o.burst)

	var namespaces []string
	for _, ns := range strings.Split(o.namespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			namespaces = append(namespaces, ns)
		}
	}
	pods := &controller.PodStores{}
	cacheOpts := controller.CacheOptions(namespaces, pods, gang.Kinds(gangScheduler)...)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Metrics:                 metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        leaseName,
		LeaderElectionConfig:    leaderCfg,
		LeaderElectionNamespace: o.leaderElectionNS,
		LeaseDuration:           &o.leaseDuration,
		RenewDeadline:           &o.renewDeadline,
		RetryPeriod:             &o.retryPeriod,
		// A leader that stops (a rollout, a drain) gives its Lease up,
		// so a standby takes over at once instead of after the lease
		// duration. One that loses the Lease exits, and a fresh process
		// starts from a fresh cache.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	clientset, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("making a clientset: %w", err)
	}
	cachesDenials, err := dnsCachesDenials(o.dnsCachesDenials, o.searchDomain)
	if err != nil {
		return err
	}
	r := &controller.Reconciler{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetAPIReader(),
		Recorder:          mgr.GetEventRecorder("mpi-operator"),
		Clock:             clock.RealClock{},
		Expectations:      controller.NewExpectations(clock.RealClock{}).ReadingFrom(pods),
		Pods:              pods,
		PodDeletes:        controller.ClientsetPods{Clientset: clientset},
		Options:           builder.Options{ClusterDomain: o.clusterDomain, SearchDomain: o.searchDomain, DNSCachesDenials: cachesDenials},
		CreateParallelism: o.createParallelism,
		Gang:              gangScheduler,
		Logs:              controller.ClientsetLogs{Clientset: clientset},
		AvoidLostNodeFor:  o.avoidLostNodeFor,
	}
	setup := controller.SetupOptions{Concurrency: o.concurrency, QueueQPS: o.queueQPS, QueueBurst: o.queueBurst}
	if err := r.SetupWithManager(mgr, setup); err != nil {
		return fmt.Errorf("setting up controller: %w", err)
	}
	synced := make(cacheSynced)
	if err := mgr.Add(synced); err != nil {
		return fmt.Errorf("adding cache-synced signal: %w", err)
	}
	if err := mgr.Add(controller.LeaderGauge()); err != nil {
		return fmt.Errorf("adding leader gauge: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", synced.Check); err != nil {
		return fmt.Errorf("adding ready check: %w", err)
	}
	ctrl.Log.Info("Starting mpi-operator", "version", version.Version, "namespaces", namespaces,
		"clusterDomain", o.clusterDomain, "searchDomain", r.Options.SearchDomain,
		"qps", o.qps, "burst", o.burst, "concurrency", o.concurrency, "dnsCachesDenials", cachesDenials)
	ctx := ctrl.SetupSignalHandler()
	if err := controller.CheckAccess(ctx, clientset.AuthorizationV1().SelfSubjectAccessReviews(), mgr.GetRESTMapper(), scheme, cacheOpts); err != nil {
		return err
	}
	return startUntilStopped(ctx, mgr.Start, synced)
}
