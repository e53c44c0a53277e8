package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/controller"
)

// operatorConfig is a client config for a user bound to nothing but the
// ClusterRole of config/rbac, which is what the operator gets when
// deployed: every scenario then also proves that role is enough.
func operatorConfig(env *envtest.Environment) (*rest.Config, error) {
	const name = "system:serviceaccount:mpi-operator:mpi-operator"
	user, err := env.ControlPlane.AddUser(envtest.User{Name: name, Groups: []string{"system:serviceaccounts"}}, nil)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		return nil, err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(raw, role); err != nil {
		return nil, fmt.Errorf("decoding role.yaml: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
	}
	ctx := context.Background()
	for _, obj := range []client.Object{role, binding} {
		if err := k8s.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("creating %T: %w", obj, err)
		}
	}
	if operatorKubeconfig, err = user.KubeConfig(); err != nil {
		return nil, err
	}
	return user.Config(), nil
}

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
	// operatorKubeconfig is a kubeconfig of the operator's identity, for
	// tests that run the operator's binary.
	operatorKubeconfig []byte
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
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))

	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting kube-apiserver and etcd:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	operatorCfg, err := operatorConfig(env)
	if err != nil {
		fmt.Fprintln(os.Stderr, "setting up the operator's identity:", err)
		return 1
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := ctrl.NewManager(operatorCfg, ctrl.Options{
		Scheme:  scheme,
		Cache:   controller.CacheOptions(nil),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r = &controller.Reconciler{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetAPIReader(),
		Recorder:          mgr.GetEventRecorder("mpi-operator"),
		Clock:             testClock,
		Expectations:      controller.NewExpectations(testClock),
		Options:           builder.Options{ClusterDomain: clusterDomain},
		CreateParallelism: 50,
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
	return m.Run()
}
