package benchcluster

import (
	"context"

	"k8s.io/client-go/kubernetes"

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
// ClusterRole and Roles in roleFile (config/rbac: what production grants),
// and writes to path a kubeconfig that authenticates as it (see
// Identity). Its requests are then told apart from everyone else's in the
// audit log.
func OperatorKubeconfig(ctx context.Context, cs kubernetes.Interface, adminKubeconfig, roleFile, path string) error {
	roles, err := envtestutil.ReadRoles(roleFile)
	if err != nil {
		return err
	}
	id := Identity{Namespace: OperatorNamespace, ServiceAccount: OperatorServiceAccount, ClusterRole: roles.Cluster}
	// The Roles (the leader election Lease) are granted in the operator's
	// namespace here, where its processes keep their Lease.
	for _, r := range roles.Namespaced {
		role := r.DeepCopy()
		role.Namespace, role.ResourceVersion = OperatorNamespace, ""
		id.Roles = append(id.Roles, role)
	}
	return id.Kubeconfig(ctx, cs, adminKubeconfig, path)
}
