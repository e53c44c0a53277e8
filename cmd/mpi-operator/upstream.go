package main

import (
	"flag"
	"fmt"
	"sort"
	"strconv"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// upstreamFlags are the flags of kubeflow/mpi-operator that this binary
// has no flag of its own for. They are accepted so that upstream's
// Deployment runs this binary with only its image changed; each is mapped
// to ours, or, where it means nothing here, noted once in the log.
// (--namespace, --kube-api-qps, --kube-api-burst, --cluster-domain,
// --controller-queue-rate-limit and --controller-queue-burst are ours
// too, with the same meaning.)
type upstreamFlags struct {
	master, kubeConfig string
	threadiness        int
	monitoringPort     int
	printVersion       bool
	lockNamespace      string
	// klog holds klog's flags (-v, -alsologtostderr, ...), which
	// upstream's binary takes because it logs through klog.
	klog *flag.FlagSet
}

func bindUpstreamFlags(fs *flag.FlagSet) *upstreamFlags {
	u := &upstreamFlags{klog: flag.NewFlagSet("klog", flag.ContinueOnError)}
	fs.StringVar(&u.master, "master", "", "Upstream's: URL of the API server, overriding the kubeconfig's.")
	fs.StringVar(&u.kubeConfig, "kubeConfig", "", "Upstream's spelling of --kubeconfig.")
	fs.IntVar(&u.threadiness, "threadiness", 0, "Upstream's name for --concurrency.")
	fs.IntVar(&u.monitoringPort, "monitoring-port", 0, "Upstream's: port of the metrics endpoint (0 disables it); sets --metrics-bind-address to :PORT.")
	fs.BoolVar(&u.printVersion, "version", false, "Print the version and exit.")
	fs.StringVar(&u.lockNamespace, "lock-namespace", "", "Upstream's name for --leader-election-namespace.")
	klog.InitFlags(u.klog)
	u.klog.VisitAll(func(f *flag.Flag) {
		if fs.Lookup(f.Name) == nil {
			fs.Var(f.Value, f.Name, "klog's, accepted for upstream's Deployment: "+f.Usage)
		}
	})
	return u
}

// apply maps the upstream flags that were set onto ours, unless ours was
// set too (ours wins), and returns what the log should say about them.
func (u *upstreamFlags) apply(fs *flag.FlagSet, o *options, zo *zap.Options) []string {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var notes []string
	mapped := func(from, to string) {
		notes = append(notes, fmt.Sprintf("Flag --%s (kubeflow/mpi-operator's) taken as --%s", from, to))
	}
	if set["threadiness"] && !set["concurrency"] {
		o.concurrency = u.threadiness
		mapped("threadiness", "concurrency")
	}
	if set["monitoring-port"] && !set["metrics-bind-address"] {
		o.metricsAddr = "0"
		if u.monitoringPort != 0 {
			o.metricsAddr = ":" + strconv.Itoa(u.monitoringPort)
		}
		mapped("monitoring-port", "metrics-bind-address")
	}
	if set["lock-namespace"] && !set["leader-election-namespace"] {
		o.leaderElectionNS = u.lockNamespace
		mapped("lock-namespace", "leader-election-namespace")
	}
	if set["v"] && !set["zap-log-level"] {
		if v, err := strconv.Atoi(u.klog.Lookup("v").Value.String()); err == nil && v > 0 {
			// logr's V(n) is zap's level -n.
			zo.Level = zapcore.Level(-min(v, 127))
			mapped("v", "zap-log-level")
		}
	}
	var ignored []string
	u.klog.VisitAll(func(f *flag.Flag) {
		if set[f.Name] && f.Name != "v" {
			ignored = append(ignored, "-"+f.Name)
		}
	})
	if len(ignored) > 0 {
		sort.Strings(ignored)
		notes = append(notes, fmt.Sprintf("klog flags %v accepted and ignored: logs are structured, on stderr (see --zap-*)", ignored))
	}
	return notes
}

// restConfig is the client config: upstream's --master and --kubeConfig
// when given, else controller-runtime's (--kubeconfig, $KUBECONFIG,
// in-cluster).
func (u *upstreamFlags) restConfig() (*rest.Config, error) {
	if u.master != "" || u.kubeConfig != "" {
		return clientcmd.BuildConfigFromFlags(u.master, u.kubeConfig)
	}
	return ctrl.GetConfig()
}
