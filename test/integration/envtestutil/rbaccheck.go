package envtestutil

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// GangGroups are the API groups only gang scheduling uses. The gang suite
// (test/integration/gang) proves their grants; the main suite proves every
// other one. Each suite checks every request it makes was allowed.
var GangGroups = []string{"scheduling.volcano.sh", "scheduling.x-k8s.io", "scheduling.k8s.io"}

// NotRequested are the grants no request of the operator carries, each
// with why it is granted all the same. Anything else granted and never
// requested fails the check; so does an entry here that the suite sees
// requested, or that the roles no longer grant.
var NotRequested = map[string]string{
	"update mpijobs/finalizers.kubeflow.org": "the OwnerReferencesPermissionEnforcement admission plugin " +
		"(on in the suites' API servers) checks it, with no request of its own, when the operator " +
		"creates a child whose owner reference blocks the MPIJob's deletion: without it every child " +
		"create is refused (403), which the check reports as denied",
}

// Grant is one verb on one resource that a role gives.
type Grant struct {
	Verb, Group, Resource, Subresource string
	// Namespace is a Role's; empty for the ClusterRole's (every namespace).
	Namespace string
}

func (g Grant) String() string {
	return g.Verb + " " + resourceString(g.Group, g.Resource, g.Subresource)
}

func (g Grant) allows(r Request) bool {
	return g.Verb == r.Verb && g.Group == r.Group && g.Resource == r.Resource &&
		g.Subresource == r.Subresource && (g.Namespace == "" || g.Namespace == r.Namespace)
}

// Grants lists what the roles give, one Grant per verb, group and
// resource. Wildcards and resourceNames are refused: the check could not
// tell what they grant, and least privilege has no use for them.
func (r *Roles) Grants() ([]Grant, error) {
	var out []Grant
	add := func(rules []rbacv1.PolicyRule, ns string) error {
		for _, rule := range rules {
			if len(rule.NonResourceURLs) > 0 || len(rule.ResourceNames) > 0 {
				return fmt.Errorf("rule %+v: nonResourceURLs or resourceNames", rule)
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, v := range rule.Verbs {
						if g == "*" || res == "*" || v == "*" {
							return fmt.Errorf("rule %+v: wildcard", rule)
						}
						name, sub, _ := strings.Cut(res, "/")
						out = append(out, Grant{Verb: v, Group: g, Resource: name, Subresource: sub, Namespace: ns})
					}
				}
			}
		}
		return nil
	}
	if err := add(r.Cluster.Rules, ""); err != nil {
		return nil, fmt.Errorf("cluster role %s: %w", r.Cluster.Name, err)
	}
	for _, role := range r.Namespaced {
		if err := add(role.Rules, role.Namespace); err != nil {
			return nil, fmt.Errorf("role %s/%s: %w", role.Namespace, role.Name, err)
		}
	}
	return out, nil
}

// RBACScope says which grants a suite must see used.
type RBACScope func(group string) bool

// GangScope is the gang suite's: GangGroups.
func GangScope(group string) bool { return slices.Contains(GangGroups, group) }

// CoreScope is the main suite's: every group but GangGroups.
func CoreScope(group string) bool { return !GangScope(group) }

// CheckRBAC compares the roles with the requests: it fails on every
// request refused with 403, on every grant in scope that no request used
// (a ClusterRole grant counts as used only by a request no Role allows),
// and on a stale NotRequested entry. It fails too when there is nothing to
// compare, so it never passes because the audit saw nothing. It writes a
// summary to w.
func CheckRBAC(w io.Writer, roles *Roles, reqs *Requests, scope RBACScope) error {
	grants, err := roles.Grants()
	if err != nil {
		return err
	}
	if len(reqs.Made) == 0 {
		return errors.New("the audit log holds no request of the operator: the check would prove nothing")
	}
	used, byDefault := usage(grants, reqs.Made)

	var problems, table []string
	denied := 0
	for req, n := range reqs.Denied {
		denied += n
		problems = append(problems, fmt.Sprintf("denied (403) %d×: %s", n, req))
	}
	granted := map[string]bool{}
	inScope, usedN, exemptN := 0, 0, 0
	for i, g := range grants {
		granted[g.String()] = true
		if !scope(g.Group) {
			continue
		}
		inScope++
		where := "ClusterRole"
		if g.Namespace != "" {
			where = "Role in " + g.Namespace
		}
		why, exempt := NotRequested[g.String()]
		switch {
		case used[i] > 0 && exempt:
			problems = append(problems, fmt.Sprintf("%s (%s) is requested %d×: drop it from NotRequested", g, where, used[i]))
		case used[i] > 0:
			usedN++
			table = append(table, fmt.Sprintf("  %6d  %s (%s)", used[i], g, where))
		case exempt:
			exemptN++
			table = append(table, fmt.Sprintf("  %6s  %s (%s): %s", "-", g, where, why))
		default:
			problems = append(problems, fmt.Sprintf("granted, never requested: %s (%s)", g, where))
		}
	}
	for key := range NotRequested {
		if !granted[key] {
			problems = append(problems, fmt.Sprintf("NotRequested lists %q, which the roles do not grant", key))
		}
	}
	if inScope == 0 {
		problems = append(problems, "no grant of the roles is in this suite's scope: the check would prove nothing")
	}
	sort.Strings(table)
	sort.Strings(problems)
	_, _ = fmt.Fprintf(w, "RBAC check: %d requests of %s, %d kinds; %d denied; %d allowed by Kubernetes' default roles; %d non-resource\n",
		reqs.Total(), OperatorUser, len(reqs.Made)+len(reqs.Denied), denied, byDefault, reqs.NonResource)
	_, _ = fmt.Fprintf(w, "RBAC check: %d granted verbs in this suite's scope: %d requested, %d not requested by design, %d never requested\n",
		inScope, usedN, exemptN, inScope-usedN-exemptN)
	_, _ = fmt.Fprintln(w, strings.Join(table, "\n"))
	if len(problems) > 0 {
		return fmt.Errorf("config/rbac and the operator's requests differ:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// usage counts, for each grant, the requests it allowed, and the requests
// none allowed (Kubernetes' default roles did). A request is credited to
// one grant: a Role's first, the narrower one being what it needs.
func usage(grants []Grant, made map[Request]int) ([]int, int) {
	used := make([]int, len(grants))
	byDefault := 0
	for req, n := range made {
		i := slices.IndexFunc(grants, func(g Grant) bool { return g.Namespace != "" && g.allows(req) })
		if i < 0 {
			i = slices.IndexFunc(grants, func(g Grant) bool { return g.allows(req) })
		}
		if i < 0 {
			byDefault += n
			continue
		}
		used[i] += n
	}
	return used, byDefault
}

// FullRun is false when -run or -skip picks a subset of the suite's tests:
// the grants the others use then look unused, so the check is skipped.
func FullRun() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// CheckSuite compares roles with the requests of a whole suite run, logged
// by a, and writes its summary to w. A run of a subset of the tests is not
// checked; it says so on w.
func (a *Audit) CheckSuite(w io.Writer, roles *Roles, scope RBACScope) error {
	if !FullRun() {
		_, _ = fmt.Fprintln(w, "RBAC check skipped: -run or -skip ran a subset of the suite")
		return nil
	}
	reqs, err := a.Read()
	if err != nil {
		return err
	}
	return CheckRBAC(w, roles, reqs, scope)
}
