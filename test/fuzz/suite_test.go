package fuzz

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// namespace holds every object the fuzz target sends; nothing is stored in
// it, as every create is a dry run.
const namespace = "fuzz"

// kubeconfigEnv passes the API server from the process that started it to
// the fuzz workers: `go test -fuzz` runs the target in child processes of
// the test binary, which inherit its environment and run TestMain too.
// With it the whole fuzz run uses one kube-apiserver, however many
// workers it starts (and restarts, after a failure).
const kubeconfigEnv = "MPI_OPERATOR_FUZZ_KUBECONFIG"

var (
	k8s    client.Client
	scheme = runtime.NewScheme()
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflow.AddToScheme(scheme))
	cfg, stop, err := apiServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	// client-go's default limit, 5 requests a second, would hold a fuzz
	// worker to about one input a second.
	cfg.QPS, cfg.Burst = -1, 0
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// apiServer connects to the API server of the parent process, or starts
// one (with the CRD and the namespace) and publishes it to the workers.
func apiServer() (*rest.Config, func(), error) {
	if kubeconfig := os.Getenv(kubeconfigEnv); kubeconfig != "" {
		cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig))
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", kubeconfigEnv, err)
		}
		return cfg, func() {}, nil
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run `make test` or `make fuzz`, which build kube-apiserver and etcd")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	stop := func() { _ = env.Stop() }
	user, err := env.ControlPlane.AddUser(envtest.User{Name: "fuzz", Groups: []string{"system:masters"}}, nil)
	if err == nil {
		var kubeconfig []byte
		if kubeconfig, err = user.KubeConfig(); err == nil {
			err = os.Setenv(kubeconfigEnv, string(kubeconfig))
		}
	}
	if err == nil {
		var c client.Client
		if c, err = client.New(cfg, client.Options{}); err == nil {
			err = c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
		}
	}
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("setting up the API server: %w", err)
	}
	return cfg, stop, nil
}
