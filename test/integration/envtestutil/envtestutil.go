// Package envtestutil holds what the integration suites share: the
// operator's identity on a real API server (bound only to config/rbac's
// roles), the audit of its requests checked against those roles, polling
// with a failure deadline, and the log level the suites log at.
package envtestutil

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
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

// OperatorUser is the operator's user name on the suites' API servers: its
// ServiceAccount's, as config/rbac binds it.
const OperatorUser = "system:serviceaccount:mpi-operator:mpi-operator"

// Operator is the identity the operator gets when deployed: a user bound
// to nothing but the roles of config/rbac (read from repoRoot), so every
// scenario also proves those roles are enough.
type Operator struct {
	Config     *rest.Config
	Kubeconfig []byte
	// Roles are the roles it is bound to, as role.yaml gives them.
	Roles *Roles
}

// NewOperator makes the operator's user on env and binds it, with admin,
// to the ClusterRole and to each Role in the Role's own namespace (the one
// the install gives it; the namespace is made if missing), as
// config/rbac's bindings do.
func NewOperator(ctx context.Context, env *envtest.Environment, admin client.Client, repoRoot string) (*Operator, error) {
	user, err := env.ControlPlane.AddUser(envtest.User{Name: OperatorUser, Groups: []string{"system:serviceaccounts"}}, nil)
	if err != nil {
		return nil, err
	}
	roles, err := ReadRoles(filepath.Join(repoRoot, "config", "rbac", "role.yaml"))
	if err != nil {
		return nil, err
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: OperatorUser}}
	objs := []client.Object{
		roles.Cluster.DeepCopy(),
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: roles.Cluster.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roles.Cluster.Name},
			Subjects:   subjects,
		},
	}
	for _, role := range roles.Namespaced {
		objs = append(objs,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: role.Namespace}},
			role.DeepCopy(),
			&rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
				Subjects:   subjects,
			})
	}
	for _, obj := range objs {
		err := admin.Create(ctx, obj)
		if _, isNS := obj.(*corev1.Namespace); isNS && apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	return &Operator{Config: user.Config(), Kubeconfig: kubeconfig, Roles: roles}, nil
}

// LeaseNamespaces are the namespaces where the operator may hold its
// leader election Lease: those of its Roles that grant leases.
func (o *Operator) LeaseNamespaces() []string {
	var out []string
	for _, role := range o.Roles.Namespaced {
		for _, rule := range role.Rules {
			if slices.Contains(rule.APIGroups, "coordination.k8s.io") && slices.Contains(rule.Resources, "leases") {
				out = append(out, role.Namespace)
				break
			}
		}
	}
	return out
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
