package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/controller"
	"github.com/mpi-operator/mpi-operator/test/integration/envtestutil"
)

// clusterDomain differs from the default on purpose: the tests then prove
// the flag reaches the hostfile.
const clusterDomain = "test.example"

var (
	cfg       *rest.Config
	k8s       client.Client
	scheme    = runtime.NewScheme()
	testClock = clock.RealClock{}
	// r is the controller under test.
	r *controller.Reconciler
	// podStores are the Pod stores of r's cache.
	podStores = &controller.PodStores{}
	// operatorKubeconfig is a kubeconfig of the operator's identity, for
	// tests that run the operator's binary.
	operatorKubeconfig []byte
	// operatorLeaseNamespaces are where config/rbac lets it hold a Lease.
	operatorLeaseNamespaces []string
	// testEnv is the suite's API server, for tests that add users.
	testEnv *envtest.Environment
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run `make test`, which builds kube-apiserver and etcd")
		return 1
	}
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflow.AddToScheme(scheme))
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(envtestutil.LogLevel())))

	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	audit, auditDir, err := envtestutil.ConfigureAPIServer(env, "mpi-operator-audit-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testEnv = env
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting kube-apiserver and etcd:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	operator, err := envtestutil.NewOperator(context.Background(), env, k8s, filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, "setting up the operator's identity:", err)
		return 1
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	operatorKubeconfig = operator.Kubeconfig
	operatorLeaseNamespaces = operator.LeaseNamespaces()
	mgr, err := ctrl.NewManager(operator.Config, ctrl.Options{
		Scheme:  scheme,
		Cache:   controller.CacheOptions(nil, podStores),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	clientset := kubernetes.NewForConfigOrDie(operator.Config)
	r = &controller.Reconciler{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetAPIReader(),
		Recorder:          mgr.GetEventRecorder("mpi-operator"),
		Clock:             testClock,
		Expectations:      controller.NewExpectations(testClock).ReadingFrom(podStores),
		Pods:              podStores,
		Options:           builder.Options{ClusterDomain: clusterDomain},
		CreateParallelism: 50,
		Logs:              controller.ClientsetLogs{Clientset: clientset},
		PodDeletes:        controller.ClientsetPods{Clientset: clientset},
	}
	if err := r.SetupWithManager(mgr, controller.SetupOptions{Concurrency: 4}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
			os.Exit(1)
		}
	}()
	code := m.Run()
	// Every grant outside gang scheduling's groups must be used by this
	// suite (test/integration/gang proves those), and nothing refused.
	if err := audit.CheckSuite(os.Stdout, operator.Roles, envtestutil.CoreScope); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n(audit log kept in %s)\n", err, auditDir)
		return 1
	}
	_ = os.RemoveAll(auditDir)
	return code
}
