package envtestutil

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Roles is what config/rbac/role.yaml holds: controller-gen writes the
// ClusterRole (MPIJobs and their children, in every namespace) and a Role
// per namespace a marker names (leader election, in the operator's own).
type Roles struct {
	Cluster *rbacv1.ClusterRole
	// Namespaced are the Roles, each with the namespace the file gives it.
	Namespaced []*rbacv1.Role
}

// ReadRoles reads a multi-document role file; it fails on any other kind,
// and when the file holds no ClusterRole, so a change of controller-gen's
// output cannot leave the operator silently unbound.
func ReadRoles(path string) (*Roles, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	roles := &Roles{}
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", path, err)
		}
		switch meta.Kind {
		case "ClusterRole":
			if roles.Cluster != nil {
				return nil, fmt.Errorf("%s holds two ClusterRoles", path)
			}
			roles.Cluster = &rbacv1.ClusterRole{}
			err = yaml.Unmarshal(doc, roles.Cluster)
		case "Role":
			role := &rbacv1.Role{}
			err = yaml.Unmarshal(doc, role)
			if err == nil && role.Namespace == "" {
				err = fmt.Errorf("role %s has no namespace", role.Name)
			}
			roles.Namespaced = append(roles.Namespaced, role)
		default:
			err = fmt.Errorf("unexpected kind %q", meta.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", path, err)
		}
	}
	if roles.Cluster == nil {
		return nil, fmt.Errorf("%s holds no ClusterRole", path)
	}
	return roles, nil
}
