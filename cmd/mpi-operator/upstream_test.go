package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// parse runs the binary's flag handling on args, as main does.
func parse(t *testing.T, args ...string) (options, *zap.Options, []string) {
	t.Helper()
	var o options
	fs := flag.NewFlagSet("mpi-operator", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bindFlags(fs, &o)
	zo := &zap.Options{}
	zo.BindFlags(fs)
	up := bindUpstreamFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	notes := up.apply(fs, &o, zo)
	return o, zo, notes
}

func TestUpstreamFlagsAreTakenWithTheirMeaning(t *testing.T) {
	defaults, _, _ := parse(t)
	cases := map[string]struct {
		args  []string
		want  func(o *options)
		notes []string
	}{
		"upstream's standalone Deployment": {
			args:  []string{"-alsologtostderr", "--lock-namespace=mpi-operator"},
			want:  func(o *options) { o.leaderElectionNS = "mpi-operator" },
			notes: []string{"--lock-namespace", "[-alsologtostderr]"},
		},
		"every upstream flag": {
			args: []string{"--threadiness=4", "--monitoring-port=8443", "--kube-api-qps=5", "--kube-api-burst=10",
				"--controller-queue-rate-limit=20", "--controller-queue-burst=200", "--cluster-domain=corp.example",
				"--namespace=team-a", "--lock-namespace=kubeflow", "-logtostderr=false", "-stderrthreshold=INFO"},
			want: func(o *options) {
				o.concurrency, o.metricsAddr, o.qps, o.burst = 4, ":8443", 5, 10
				o.queueQPS, o.queueBurst, o.clusterDomain = 20, 200, "corp.example"
				o.namespaces, o.leaderElectionNS = "team-a", "kubeflow"
			},
			notes: []string{"--threadiness", "--monitoring-port", "--lock-namespace", "[-logtostderr -stderrthreshold]"},
		},
		"monitoring port 0 disables metrics, as upstream": {
			args:  []string{"--monitoring-port=0"},
			want:  func(o *options) { o.metricsAddr = "0" },
			notes: []string{"--monitoring-port"},
		},
		"our own flag wins over upstream's": {
			args: []string{"--threadiness=4", "--concurrency=8", "--lock-namespace=a", "--leader-election-namespace=b"},
			want: func(o *options) { o.concurrency, o.leaderElectionNS = 8, "b" },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _, notes := parse(t, tc.args...)
			want := defaults
			tc.want(&want)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			all := strings.Join(notes, "\n")
			for _, n := range tc.notes {
				if !strings.Contains(all, n) {
					t.Errorf("log notes %q do not mention %s", notes, n)
				}
			}
		})
	}
}

func TestKlogVerbosityBecomesTheLogLevel(t *testing.T) {
	_, zo, _ := parse(t, "-v=4")
	if zo.Level == nil || !zo.Level.Enabled(zapcore.Level(-4)) || zo.Level.Enabled(zapcore.Level(-5)) {
		t.Errorf("-v=4 gave zap level %v, want -4", zo.Level)
	}
	_, zo, _ = parse(t, "-v=4", "--zap-log-level=info")
	if zo.Level.Enabled(zapcore.Level(-1)) {
		t.Errorf("--zap-log-level=info lost to -v=4")
	}
}

func TestUpstreamNamespaceVariableIsTheDefaultScope(t *testing.T) {
	t.Setenv("KUBEFLOW_NAMESPACE", "kubeflow")
	if o, _, _ := parse(t); o.namespaces != "kubeflow" {
		t.Errorf("namespaces = %q, want kubeflow", o.namespaces)
	}
}

func TestClusterDomainFromResolvConf(t *testing.T) {
	cases := map[string]struct{ conf, want string }{
		"kubelet's search list": {
			conf: "search mpi-operator.svc.corp.example svc.corp.example corp.example\nnameserver 10.96.0.10\noptions ndots:5\n",
			want: "corp.example",
		},
		"trailing dots":     {conf: "search ns.svc.cluster.local. svc.cluster.local. cluster.local.\n", want: "cluster.local"},
		"outside a cluster": {conf: "search example.com\nnameserver 192.0.2.1\n", want: ""},
		"no search line":    {conf: "nameserver 192.0.2.1\n", want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "resolv.conf")
			if err := os.WriteFile(path, []byte(tc.conf), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := clusterDomainFromResolvConf(path); got != tc.want {
				t.Errorf("domain = %q, want %q", got, tc.want)
			}
		})
	}
	if got := clusterDomainFromResolvConf(filepath.Join(t.TempDir(), "missing")); got != "" {
		t.Errorf("missing file gave %q", got)
	}
}
