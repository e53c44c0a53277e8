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
)

// Identity is a ServiceAccount an operator runs as on the benchmark
// cluster, with the roles a deployment of that operator grants it. An
// operator that runs as one is held to least privilege, and the API
// server's priority and fairness treats it as a deployed one (the
// workload-low level), where the cluster's admin would be exempt.
type Identity struct {
	Namespace, ServiceAccount string
	// ClusterRole is created as named here: whoever builds the Identity
	// names it apart from another operator's.
	ClusterRole *rbacv1.ClusterRole
	// Roles are each granted in the namespace they name.
	Roles []*rbacv1.Role
}

// Kubeconfig makes the ServiceAccount, its roles and their bindings (each
// kept if it exists already), and writes to path a copy of
// adminKubeconfig that authenticates as the ServiceAccount.
func (id Identity) Kubeconfig(ctx context.Context, cs kubernetes.Interface, adminKubeconfig, path string) error {
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: id.Namespace, Name: id.ServiceAccount}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: id.ClusterRole.Name + "-bench"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: id.ClusterRole.Name},
		Subjects:   subjects,
	}
	namespaces := []string{id.Namespace}
	for _, r := range id.Roles {
		namespaces = append(namespaces, r.Namespace)
	}
	var objs []func() error
	for _, ns := range namespaces {
		objs = append(objs, func() error {
			_, err := cs.CoreV1().Namespaces().Create(ctx,
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			return err
		})
	}
	objs = append(objs,
		func() error {
			_, err := cs.CoreV1().ServiceAccounts(id.Namespace).Create(ctx,
				&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: id.ServiceAccount}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.RbacV1().ClusterRoles().Create(ctx, id.ClusterRole, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
			return err
		},
	)
	for _, role := range id.Roles {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-bench", Namespace: role.Namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   subjects,
		}
		objs = append(objs, func() error {
			_, err := cs.RbacV1().Roles(role.Namespace).Create(ctx, role, metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := cs.RbacV1().RoleBindings(role.Namespace).Create(ctx, rb, metav1.CreateOptions{})
			return err
		})
	}
	for _, create := range objs {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("setting up the identity %s/%s: %w", id.Namespace, id.ServiceAccount, err)
		}
	}
	tok, err := cs.CoreV1().ServiceAccounts(id.Namespace).CreateToken(ctx, id.ServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)}},
		metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("requesting the token of %s/%s: %w", id.Namespace, id.ServiceAccount, err)
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
