package envtestutil

import (
	"io"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testRoles() *Roles {
	return &Roles{
		Cluster: &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "op"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "list"}},
				{APIGroups: []string{"kubeflow.org"}, Resources: []string{"mpijobs/finalizers"}, Verbs: []string{"update"}},
				{APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"workloads"}, Verbs: []string{"get"}},
			},
		},
		Namespaced: []*rbacv1.Role{{
			ObjectMeta: metav1.ObjectMeta{Name: "op", Namespace: "ops"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get"}},
			},
		}},
	}
}

var (
	createPod = Request{Verb: "create", Resource: "pods", Namespace: "job-ns"}
	listPods  = Request{Verb: "list", Resource: "pods"}
	getLease  = Request{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: "ops"}
)

// TestCheckRBAC: the check passes only when every grant in scope is
// requested (or listed in NotRequested) and nothing is refused.
func TestCheckRBAC(t *testing.T) {
	cases := map[string]struct {
		roles   func(*Roles)
		made    []Request
		denied  []Request
		scope   RBACScope
		wantErr []string
	}{
		"every grant used": {
			made:  []Request{createPod, listPods, getLease},
			scope: CoreScope,
		},
		"the gang suite checks only its groups": {
			made:  []Request{{Verb: "get", Group: "scheduling.k8s.io", Resource: "workloads", Namespace: "x"}},
			scope: GangScope,
		},
		"a granted verb never requested": {
			made:    []Request{createPod, getLease},
			scope:   CoreScope,
			wantErr: []string{"granted, never requested: list pods (ClusterRole)"},
		},
		"a gang grant never requested": {
			made:    []Request{createPod},
			scope:   GangScope,
			wantErr: []string{"granted, never requested: get workloads.scheduling.k8s.io"},
		},
		"a refused request": {
			made:    []Request{createPod, listPods, getLease},
			denied:  []Request{{Verb: "delete", Resource: "pods", Namespace: "job-ns"}},
			scope:   CoreScope,
			wantErr: []string{"denied (403) 1×: delete pods in job-ns"},
		},
		"a Role's grant used only outside its namespace": {
			made:    []Request{createPod, listPods, {Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: "elsewhere"}},
			scope:   CoreScope,
			wantErr: []string{"granted, never requested: get leases.coordination.k8s.io (Role in ops)"},
		},
		"a ClusterRole grant a Role already covers": {
			roles: func(r *Roles) {
				r.Cluster.Rules = append(r.Cluster.Rules, rbacv1.PolicyRule{
					APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get"}})
			},
			made:    []Request{createPod, listPods, getLease},
			scope:   CoreScope,
			wantErr: []string{"granted, never requested: get leases.coordination.k8s.io (ClusterRole)"},
		},
		"a NotRequested grant that is requested": {
			made:    []Request{createPod, listPods, getLease, {Verb: "update", Group: "kubeflow.org", Resource: "mpijobs", Subresource: "finalizers", Namespace: "j"}},
			scope:   CoreScope,
			wantErr: []string{"update mpijobs/finalizers.kubeflow.org (ClusterRole) is requested 1×: drop it from NotRequested"},
		},
		"a NotRequested entry the roles no longer grant": {
			roles:   func(r *Roles) { r.Cluster.Rules = r.Cluster.Rules[:1] },
			made:    []Request{createPod, listPods, getLease},
			scope:   CoreScope,
			wantErr: []string{`NotRequested lists "update mpijobs/finalizers.kubeflow.org", which the roles do not grant`},
		},
		"an empty audit log": {
			scope:   CoreScope,
			wantErr: []string{"the audit log holds no request of the operator"},
		},
		"a wildcard": {
			roles: func(r *Roles) {
				r.Cluster.Rules = append(r.Cluster.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"*"}, Verbs: []string{"get"}})
			},
			made:    []Request{createPod},
			scope:   CoreScope,
			wantErr: []string{"wildcard"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			roles := testRoles()
			if tc.roles != nil {
				tc.roles(roles)
			}
			reqs := &Requests{Made: map[Request]int{}, Denied: map[Request]int{}}
			for _, r := range tc.made {
				reqs.Made[r]++
			}
			for _, r := range tc.denied {
				reqs.Denied[r]++
			}
			err := CheckRBAC(io.Discard, roles, reqs, tc.scope)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error naming %q, got none", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}
