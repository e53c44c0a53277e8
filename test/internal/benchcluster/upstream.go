package benchcluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Upstream's (kubeflow/mpi-operator's) identity on the benchmark cluster:
// a namespace and a ClusterRole name of its own, so that neither collides
// with this operator's (whose ClusterRole is mpi-operator too).
const (
	UpstreamNamespace      = "upstream-operator"
	UpstreamServiceAccount = "mpi-operator"
	UpstreamClusterRole    = "upstream-mpi-operator"
)

// UpstreamRoleFile is where upstream's release keeps the ClusterRole its
// install binds to its operator (manifests/base/cluster-role-binding.yaml
// binds upstreamRoleName), beside the aggregated roles it gives users.
const (
	UpstreamRoleFile = "manifests/base/cluster-role.yaml"
	upstreamRoleName = "mpi-operator"
)

// leaseVerbs are what client-go's leader election asks of its Lease.
var leaseVerbs = []string{"get", "create", "update"}

// UpstreamIdentity is upstream run as its release (in the module folder
// moduleDir) deploys it: a ServiceAccount bound to the release's own
// ClusterRole, renamed UpstreamClusterRole. It must also hold its leader
// election Lease in lockNamespace (its --lock-namespace): v0.8.2's
// ClusterRole grants every verb on leases in every namespace, so no Role
// is added; a release that grants less gets a Role in lockNamespace for
// what is missing, rather than an operator that never leads.
func UpstreamIdentity(moduleDir, lockNamespace string) (Identity, error) {
	path := filepath.Join(moduleDir, UpstreamRoleFile)
	role, err := readClusterRole(path, upstreamRoleName)
	if err != nil {
		return Identity{}, err
	}
	role.Name, role.ResourceVersion = UpstreamClusterRole, ""
	id := Identity{Namespace: UpstreamNamespace, ServiceAccount: UpstreamServiceAccount, ClusterRole: role}
	var missing []string
	for _, v := range leaseVerbs {
		if !grants(role.Rules, coordinationv1.GroupName, "leases", v) {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		id.Roles = append(id.Roles, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: UpstreamClusterRole + "-lease", Namespace: lockNamespace},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: missing,
			}},
		})
	}
	return id, nil
}

// readClusterRole reads the ClusterRole of that name from a multi-document
// YAML file.
func readClusterRole(path, name string) (*rbacv1.ClusterRole, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		role := &rbacv1.ClusterRole{}
		err := dec.Decode(role)
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s holds no ClusterRole %s", path, name)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if role.Kind == "ClusterRole" && role.Name == name {
			return role, nil
		}
	}
}

// grants says whether rules allow verb on every object of resource in
// group, as RBAC matches them (with its "*" wildcards).
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) {
			return true
		}
	}
	return false
}
