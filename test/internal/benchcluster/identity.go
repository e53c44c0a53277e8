package benchcluster

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/mpi-operator/mpi-operator/test/integration/envtestutil"
)

// The operator's identity on the benchmark cluster. hack/bench/up.sh's
// audit policy logs the writes of exactly this user.
const (
	OperatorNamespace      = "mpi-operator-bench"
	OperatorServiceAccount = "mpi-operator"
	OperatorUser           = "system:serviceaccount:" + OperatorNamespace + ":" + OperatorServiceAccount
)

// OperatorKubeconfig makes the operator a ServiceAccount bound to the
// ClusterRole and Roles in roleFile (config/rbac: what production grants), and
// writes to path a copy of adminKubeconfig that authenticates as it. The
// operator then runs with least privilege here too, and its requests are
// told apart from everyone else's in the audit log.
func OperatorKubeconfig(ctx context.Context, cs kubernetes.Interface, adminKubeconfig, roleFile, path string) error {
	roles, err := envtestutil.ReadRoles(roleFile)
	if err != nil {
		return err
	}
	role := roles.Cluster
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-bench"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{
			Kind: rbacv1.ServiceAccountKind, Namespace: OperatorNamespace, Name: OperatorServiceAccount,
		}},
	}
	objs := []func() error{
		func() error {
			_, err := cs.CoreV1().Namespaces().Create(ctx,
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OperatorNamespace}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.CoreV1().ServiceAccounts(OperatorNamespace).Create(ctx,
				&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: OperatorServiceAccount}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
			return err
		},
	}
	// The Roles (the leader election Lease) are granted in the operator's
	// namespace here, where its processes keep their Lease.
	for _, r := range roles.Namespaced {
		role := r.DeepCopy()
		role.Namespace, role.ResourceVersion = OperatorNamespace, ""
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-bench", Namespace: OperatorNamespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   binding.Subjects,
		}
		objs = append(objs, func() error {
			_, err := cs.RbacV1().Roles(OperatorNamespace).Create(ctx, role, metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := cs.RbacV1().RoleBindings(OperatorNamespace).Create(ctx, rb, metav1.CreateOptions{})
			return err
		})
	}
	for _, create := range objs {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("setting up the operator's identity: %w", err)
		}
	}
	tok, err := cs.CoreV1().ServiceAccounts(OperatorNamespace).CreateToken(ctx, OperatorServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)}},
		metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("requesting the operator's token: %w", err)
	}
	cfg, err := clientcmd.LoadFromFile(adminKubeconfig)
	if err != nil {
		return err
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil {
		return fmt.Errorf("%s has no current context", adminKubeconfig)
	}
	user := cfg.AuthInfos[kctx.AuthInfo]
	user.ClientCertificate, user.ClientCertificateData = "", nil
	user.ClientKey, user.ClientKeyData = "", nil
	user.Token = tok.Status.Token
	// clientcmd writes it 0600: it holds a token.
	return clientcmd.WriteToFile(*cfg, path)
}
