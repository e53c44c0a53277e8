package benchcluster

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mpi-operator/mpi-operator/test/upstream"
)

// TestUpstreamIdentityOfTheRelease reads the pinned release's own
// ClusterRole: it is found, renamed apart from ours, and grants the Lease
// by itself, so the bench adds no Role of its own to upstream's.
func TestUpstreamIdentityOfTheRelease(t *testing.T) {
	id, err := UpstreamIdentity(upstream.Dir(t), "upstream-defaults")
	if err != nil {
		t.Fatal(err)
	}
	if id.ClusterRole.Name != UpstreamClusterRole || len(id.ClusterRole.Rules) == 0 {
		t.Errorf("ClusterRole %q with %d rules, want %q with upstream's rules", id.ClusterRole.Name, len(id.ClusterRole.Rules), UpstreamClusterRole)
	}
	if !grants(id.ClusterRole.Rules, "kubeflow.org", "mpijobs", "watch") {
		t.Errorf("not the operator's ClusterRole: it does not watch MPIJobs")
	}
	if len(id.Roles) != 0 {
		t.Errorf("Roles %v added: %s no longer grants the Lease", id.Roles, upstream.Version)
	}
}

// TestUpstreamIdentityGrantsTheLeaseItLacks: a release whose ClusterRole
// grants less of the Lease than leader election asks gets the rest in its
// lock namespace.
func TestUpstreamIdentityGrantsTheLeaseItLacks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, UpstreamRoleFile)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	const roles = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kubeflow-mpijobs-view
rules:
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: mpi-operator
rules:
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["get"]
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  resourceNames: ["mpi-operator"]
  verbs: ["update"]
`
	if err := os.WriteFile(file, []byte(roles), 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := UpstreamIdentity(dir, "upstream-lock")
	if err != nil {
		t.Fatal(err)
	}
	if len(id.Roles) != 1 {
		t.Fatalf("%d Roles, want 1", len(id.Roles))
	}
	r := id.Roles[0]
	if r.Namespace != "upstream-lock" || !slices.Equal(r.Rules[0].Verbs, []string{"create", "update"}) {
		t.Errorf("Role in %q granting %v, want in upstream-lock granting [create update]", r.Namespace, r.Rules[0].Verbs)
	}
}

func TestReadClusterRoleNamesTheMissingRole(t *testing.T) {
	file := filepath.Join(t.TempDir(), "roles.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: mpi-operator\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readClusterRole(file, "mpi-operator"); err == nil {
		t.Error("a file without the ClusterRole read without error")
	}
}
