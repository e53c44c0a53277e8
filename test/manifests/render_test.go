package manifests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// rendered is one kustomize build, by kind and name.
type rendered map[string][]byte

// render builds the kustomization in dir, as `kubectl apply -k` would.
func render(t *testing.T, dir string) rendered {
	t.Helper()
	out, err := exec.Command("kubectl", "kustomize", dir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	objs := rendered{}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("decoding kustomize output: %v", err)
		}
		objs[u.GetKind()+"/"+u.GetName()] = []byte(doc)
	}
	return objs
}

// get decodes the object of that kind and name into obj; it fails the
// test if the build has none.
func (r rendered) get(t *testing.T, key string, obj any) {
	t.Helper()
	raw, ok := r[key]
	if !ok {
		t.Fatalf("config/default renders no %s", key)
	}
	if err := yaml.Unmarshal(raw, obj); err != nil {
		t.Fatalf("decoding %s: %v", key, err)
	}
}

// TestOperatorPodIsHardened: the operator needs no privilege on its node,
// so its Pod keeps the restricted Pod Security profile and a read-only
// root filesystem.
func TestOperatorPodIsHardened(t *testing.T) {
	d := &appsv1.Deployment{}
	render(t, "../../config/default").get(t, "Deployment/mpi-operator", d)
	pod := d.Spec.Template.Spec
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Error("the Pod does not set runAsNonRoot: true")
	}
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Error("the Pod names no non-zero runAsUser (the image's user is not trusted to be non-root)")
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Error("the Pod shares a host namespace")
	}
	if len(pod.Containers) == 0 {
		t.Fatal("the Pod has no containers")
	}
	for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("container %s: no securityContext", c.Name)
			continue
		}
		seccomp := sc.SeccompProfile
		if seccomp == nil && psc != nil {
			seccomp = psc.SeccompProfile
		}
		if seccomp == nil || seccomp.Type != "RuntimeDefault" {
			t.Errorf("container %s: seccomp profile %v, want RuntimeDefault", c.Name, seccomp)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("container %s: allowPrivilegeEscalation is not false", c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("container %s: privileged", c.Name)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("container %s: root filesystem is writable", c.Name)
		}
		if sc.Capabilities == nil || len(sc.Capabilities.Add) != 0 || !containsAll(sc.Capabilities.Drop) {
			t.Errorf("container %s: capabilities %+v, want drop [ALL] and nothing added", c.Name, sc.Capabilities)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			t.Errorf("container %s: runs as root", c.Name)
		}
	}
}

func containsAll(caps []corev1.Capability) bool {
	for _, c := range caps {
		if c == "ALL" {
			return true
		}
	}
	return false
}

// TestOperatorIsHighlyAvailable: two replicas elect a leader, and a
// disruption budget lets a drain take only one at a time, never the last.
func TestOperatorIsHighlyAvailable(t *testing.T) {
	objs := render(t, "../../config/default")
	d := &appsv1.Deployment{}
	objs.get(t, "Deployment/mpi-operator", d)
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Fatalf("replicas %s, want at least 2", ptrString(d.Spec.Replicas))
	}
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if a == "--leader-elect=false" {
			t.Error("leader election is off: two replicas would both act")
		}
	}
	pdb := &policyv1.PodDisruptionBudget{}
	objs.get(t, "PodDisruptionBudget/mpi-operator", pdb)
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the PodDisruptionBudget's selector %s does not select the operator's Pods", sel)
	}
	if pdb.Namespace != d.Namespace {
		t.Errorf("the PodDisruptionBudget is in %q, the Deployment in %q", pdb.Namespace, d.Namespace)
	}
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 || int32(pdb.Spec.MinAvailable.IntValue()) >= *d.Spec.Replicas {
		t.Errorf("minAvailable %v with %d replicas: a drain must be able to evict one and never the last",
			pdb.Spec.MinAvailable, *d.Spec.Replicas)
	}
}

// TestLeaderElectionRBACFollowsTheInstallNamespace installs config/default
// under another namespace, as a user's overlay would: the Lease's Role,
// its binding's subject, the ClusterRoleBinding's subject and the
// Deployment all move there, and no ClusterRole grants Leases.
func TestLeaderElectionRBACFollowsTheInstallNamespace(t *testing.T) {
	const ns = "ops-elsewhere"
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// kustomize takes only a relative path to another kustomization.
	overlay, err := os.MkdirTemp(repo, ".overlay-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(overlay) })
	kustomization := "namespace: " + ns + "\nresources:\n- ../config/default\n"
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	objs := render(t, overlay)

	d := &appsv1.Deployment{}
	objs.get(t, "Deployment/mpi-operator", d)
	role := &rbacv1.Role{}
	objs.get(t, "Role/mpi-operator", role)
	rb := &rbacv1.RoleBinding{}
	objs.get(t, "RoleBinding/mpi-operator", rb)
	crb := &rbacv1.ClusterRoleBinding{}
	objs.get(t, "ClusterRoleBinding/mpi-operator", crb)
	cr := &rbacv1.ClusterRole{}
	objs.get(t, "ClusterRole/mpi-operator", cr)

	for what, got := range map[string]string{"Deployment": d.Namespace, "Role": role.Namespace, "RoleBinding": rb.Namespace} {
		if got != ns {
			t.Errorf("%s in namespace %q, want %q", what, got, ns)
		}
	}
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "--leader-election-namespace") || strings.HasPrefix(a, "--lock-namespace") {
			t.Errorf("the Deployment pins the Lease's namespace (%s): it would not follow the install", a)
		}
	}
	sa := d.Spec.Template.Spec.ServiceAccountName
	want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}
	for what, subjects := range map[string][]rbacv1.Subject{"RoleBinding": rb.Subjects, "ClusterRoleBinding": crb.Subjects} {
		if len(subjects) != 1 || subjects[0] != want {
			t.Errorf("%s subjects %+v, want [%+v]", what, subjects, want)
		}
	}
	if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != role.Name {
		t.Errorf("RoleBinding refers to %s %s, want Role %s", rb.RoleRef.Kind, rb.RoleRef.Name, role.Name)
	}
	leases := false
	for _, rule := range role.Rules {
		for _, res := range rule.Resources {
			leases = leases || res == "leases"
		}
	}
	if !leases {
		t.Error("the Role grants no leases: leader election would be refused")
	}
	for _, rule := range cr.Rules {
		for _, res := range rule.Resources {
			if res == "leases" {
				t.Errorf("the ClusterRole grants leases (%v) in every namespace", rule.Verbs)
			}
		}
	}
}

func ptrString(p *int32) string {
	if p == nil {
		return "unset"
	}
	return strconv.Itoa(int(*p))
}
