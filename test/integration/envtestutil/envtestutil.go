// Package envtestutil holds what the integration suites share: the
// operator's identity on a real API server (bound only to config/rbac's
// ClusterRole), polling with a failure deadline, and the log level the
// suites log at.
package envtestutil

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// Timeout bounds every wait; it is a failure deadline, not a measurement.
const Timeout = 30 * time.Second

// LogLevel is the controller's log level in the suites:
// TEST_LOG_VERBOSITY=N shows V(N) logs, errors only otherwise.
func LogLevel() zapcore.Level {
	if v, err := strconv.Atoi(os.Getenv("TEST_LOG_VERBOSITY")); err == nil {
		return zapcore.Level(-v)
	}
	return zapcore.ErrorLevel
}

// Operator is the identity the operator gets when deployed: a user bound
// to nothing but the ClusterRole of config/rbac (read from repoRoot), so
// every scenario also proves that role is enough.
type Operator struct {
	Config     *rest.Config
	Kubeconfig []byte
}

// NewOperator makes the operator's user on env and binds it, with admin,
// to the role.
func NewOperator(ctx context.Context, env *envtest.Environment, admin client.Client, repoRoot string) (*Operator, error) {
	const name = "system:serviceaccount:mpi-operator:mpi-operator"
	user, err := env.ControlPlane.AddUser(envtest.User{Name: name, Groups: []string{"system:serviceaccounts"}}, nil)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, "config", "rbac", "role.yaml"))
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
	for _, obj := range []client.Object{role, binding} {
		if err := admin.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("creating %T: %w", obj, err)
		}
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	return &Operator{Config: user.Config(), Kubeconfig: kubeconfig}, nil
}

// Eventually polls cond until it returns true, and fails the test with
// the last error it gave after Timeout. A cond must return true only once
// what it waits for is done: (true, err) ends the wait as a success.
func Eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, Timeout, true,
		func(ctx context.Context) (bool, error) {
			ok, err := cond(ctx)
			last = err
			return ok, nil
		})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}
