package gang

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/controller"
	"github.com/mpi-operator/mpi-operator/internal/gang"
	"github.com/mpi-operator/mpi-operator/test/integration/envtestutil"
)

// ours maps each --gang-scheduling value under test to the namespace its
// operator watches.
var ours = map[string]string{
	gang.Volcano:          "ours-volcano",
	gang.SchedulerPlugins: "ours-scheduler-plugins",
	gang.Kubernetes:       "ours-kubernetes",
}

// PriorityClasses the jobs' templates name; Pods naming a class that does
// not exist are refused.
var priorityClasses = map[string]int32{"gang-high": 1000, "gang-low": 10}

var (
	env    *envtest.Environment
	k8s    client.Client
	scheme = runtime.NewScheme()
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run `make test`, which builds kube-apiserver and etcd")
		return 1
	}
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflow.AddToScheme(scheme))
	for mode := range ours {
		if _, err := gang.New(mode, scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(envtestutil.LogLevel())))

	env = &envtest.Environment{
		CRDDirectoryPaths: []string{
			filepath.Join("..", "..", "..", "config", "crd", "bases"),
			filepath.Join("testdata", "crds"),
		},
		ErrorIfCRDPathMissing: true,
	}
	// Kubernetes' Workload API: beta and off by default in 1.37.
	api := env.ControlPlane.GetAPIServer().Configure()
	api.Append("feature-gates", "GenericWorkload=true")
	api.Append("runtime-config", "scheduling.k8s.io/v1alpha3=true")
	audit, auditDir, err := envtestutil.ConfigureAPIServer(env, "mpi-operator-gang-audit-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting kube-apiserver and etcd:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := setupCluster(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "setting up the cluster:", err)
		return 1
	}
	operator, err := envtestutil.NewOperator(ctx, env, k8s, filepath.Join("..", "..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, "setting up the operator's identity:", err)
		return 1
	}
	for mode, ns := range ours {
		if err := startOperator(ctx, operator.Config, mode, ns); err != nil {
			fmt.Fprintf(os.Stderr, "starting the %s operator: %v\n", mode, err)
			return 1
		}
	}
	code := m.Run()
	// Every grant of gang scheduling's groups must be used by this suite
	// (test/integration proves the others), and nothing refused.
	if err := audit.CheckSuite(os.Stdout, operator.Roles, envtestutil.GangScope); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n(audit log kept in %s)\n", err, auditDir)
		return 1
	}
	_ = os.RemoveAll(auditDir)
	return code
}

func setupCluster(ctx context.Context) error {
	for _, ns := range ours {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	for name, value := range priorityClasses {
		if err := k8s.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}); err != nil {
			return err
		}
	}
	return nil
}

// startOperator runs our controller with --gang-scheduling=mode, scoped to
// ns, as cmd/mpi-operator wires it.
func startOperator(ctx context.Context, cfg *rest.Config, mode, ns string) error {
	// run registered every mode's kinds in scheme before any manager
	// started: registering them again here wrote to the scheme while the
	// managers of earlier modes read it (found by go test -race).
	g, err := gang.New(mode, nil)
	if err != nil {
		return err
	}
	pods := &controller.PodStores{}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Cache:   controller.CacheOptions([]string{ns}, pods, gang.Kinds(g)...),
		Metrics: metricsserver.Options{BindAddress: "0"},
		// One controller per mode in this process, all named mpijob.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
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
		CreateParallelism: 10,
		Gang:              g,
	}
	if err := r.SetupWithManager(mgr, controller.SetupOptions{Concurrency: 2}); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "%s manager: %v\n", mode, err)
			os.Exit(1)
		}
	}()
	return nil
}
