package main

import (
	"context"
	"fmt"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/mpi-operator/mpi-operator/test/integration/envtestutil"
)

// The operator's identity on the benchmark cluster. hack/bench/up.sh's
// audit policy logs the writes of exactly this user.
const (
	operatorNamespace      = "mpi-operator-bench"
	operatorServiceAccount = "mpi-operator"
)

// operatorKubeconfig makes the operator a ServiceAccount bound to the
// ClusterRole in roleFile (config/rbac: what production grants), and
// writes a kubeconfig that authenticates as it. The operator then runs
// with least privilege here too, and its requests are told apart from the
// benchmark's own in the audit log.
func (e *env) operatorKubeconfig(ctx context.Context, roleFile string) (string, error) {
	// The benchmark runs one operator, without leader election: the
	// ClusterRole is all it needs of the file, not the Lease's Role.
	roles, err := envtestutil.ReadRoles(roleFile)
	if err != nil {
		return "", err
	}
	role := roles.Cluster
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-bench"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{
			Kind: rbacv1.ServiceAccountKind, Namespace: operatorNamespace, Name: operatorServiceAccount,
		}},
	}
	objs := []func() error{
		func() error {
			_, err := e.cs.CoreV1().Namespaces().Create(ctx,
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := e.cs.CoreV1().ServiceAccounts(operatorNamespace).Create(ctx,
				&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: operatorServiceAccount}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := e.cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := e.cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objs {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("setting up the operator's identity: %w", err)
		}
	}
	tok, err := e.cs.CoreV1().ServiceAccounts(operatorNamespace).CreateToken(ctx, operatorServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)}},
		metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting the operator's token: %w", err)
	}
	cfg, err := clientcmd.LoadFromFile(e.o.kubeconfig)
	if err != nil {
		return "", err
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil {
		return "", fmt.Errorf("%s has no current context", e.o.kubeconfig)
	}
	user := cfg.AuthInfos[kctx.AuthInfo]
	user.ClientCertificate, user.ClientCertificateData = "", nil
	user.ClientKey, user.ClientKeyData = "", nil
	user.Token = tok.Status.Token
	path := filepath.Join(e.o.out, "operator.kubeconfig")
	// clientcmd writes it 0600: it holds a token.
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", err
	}
	return path, nil
}
