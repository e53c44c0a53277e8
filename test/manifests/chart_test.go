package manifests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/mpi-operator/mpi-operator/internal/version"
)

// sameObjects compares a chart rendering with a kustomize build: the same
// kinds and names, and each object equal but for its labels (the chart
// adds Helm's) and its Pod template's labels. kustomize's Namespace is
// left out: `helm install --create-namespace` makes it.
func sameObjects(t *testing.T, chart, kust rendered) {
	t.Helper()
	delete(kust, "Namespace/"+chartNS)
	if diff := cmp.Diff(keys(kust), keys(chart)); diff != "" {
		t.Errorf("kinds/names (-kustomize +chart):\n%s", diff)
	}
	for key, kraw := range kust {
		craw, ok := chart[key]
		if !ok {
			continue
		}
		k, c := withoutLabels(t, kraw), withoutLabels(t, craw)
		if diff := cmp.Diff(k.Object, c.Object); diff != "" {
			t.Errorf("%s differs (-kustomize +chart):\n%s", key, diff)
		}
	}
}

func keys(r rendered) []string {
	var out []string
	for k := range r {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// withoutLabels decodes raw and drops what Helm adds: labels of the
// object and of its Pod template. The selectors, which a Deployment
// cannot change after its creation, stay compared.
func withoutLabels(t *testing.T, raw []byte) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &u.Object); err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "labels")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "labels")
	return u
}

// TestChartRendersWhatKustomizeDoes: at its defaults the chart installs
// what config/default does, so the two ways to install cannot drift.
func TestChartRendersWhatKustomizeDoes(t *testing.T) {
	sameObjects(t, renderChart(t, nil).byName(t), render(t, "../../config/default"))
}

// TestChartServiceMonitorIsTheOverlays: metrics.serviceMonitor.enabled is
// config/overlays/prometheus.
func TestChartServiceMonitorIsTheOverlays(t *testing.T) {
	values := map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}}
	chart := renderChart(t, values).byName(t)
	if _, ok := chart["ServiceMonitor/mpi-operator"]; !ok {
		t.Fatal("metrics.serviceMonitor.enabled renders no ServiceMonitor")
	}
	sameObjects(t, chart, render(t, "../../config/overlays/prometheus"))
	if _, ok := renderChart(t, nil).byName(t)["ServiceMonitor/mpi-operator"]; ok {
		t.Error("the chart renders a ServiceMonitor by default; its CRD may not be installed")
	}
}

// generatedRoles reads config/rbac/role.yaml, controller-gen's output
// from the code's RBAC markers, by kind.
func generatedRoles(t *testing.T) map[string][]rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile("../../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]rbacv1.PolicyRule{}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		var role struct {
			Kind  string              `json:"kind"`
			Rules []rbacv1.PolicyRule `json:"rules"`
		}
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			t.Fatal(err)
		}
		if role.Kind != "" {
			out[role.Kind] = role.Rules
		}
	}
	if len(out["ClusterRole"]) == 0 || len(out["Role"]) == 0 {
		t.Fatalf("config/rbac/role.yaml has no ClusterRole or Role rules: %v", out)
	}
	return out
}

// rulesOf returns the rules of the single object of that kind and name.
func rulesOf(t *testing.T, objs chartObjects, kind, name, ns string) []rbacv1.PolicyRule {
	t.Helper()
	for _, u := range objs.ofKind(kind) {
		if u.GetName() == name && u.GetNamespace() == ns {
			var r rbacv1.Role
			decode(t, u, &r)
			return r.Rules
		}
	}
	t.Fatalf("the chart renders no %s %s/%s", kind, ns, name)
	return nil
}

// TestChartGrantsTheGeneratedRBAC: the chart grants exactly the rules
// controller-gen generates from the code's markers, the ones the
// integration suites check against the requests the controller makes.
func TestChartGrantsTheGeneratedRBAC(t *testing.T) {
	want := generatedRoles(t)
	objs := renderChart(t, nil)
	if diff := cmp.Diff(want["ClusterRole"], rulesOf(t, objs, "ClusterRole", "mpi-operator", "")); diff != "" {
		t.Errorf("ClusterRole rules (-config/rbac +chart):\n%s", diff)
	}
	if diff := cmp.Diff(want["Role"], rulesOf(t, objs, "Role", "mpi-operator", chartNS)); diff != "" {
		t.Errorf("Role rules (-config/rbac +chart):\n%s", diff)
	}
}

// TestChartCRDIsTheGeneratedCRD: the chart's crds/ holds controller-gen's
// CRD, the file and what Helm installs from it.
func TestChartCRDIsTheGeneratedCRD(t *testing.T) {
	const name = "kubeflow.org_mpijobs.yaml"
	want, err := os.ReadFile(filepath.Join("../../config/crd/bases", name))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(chartDir, "crds", name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("charts/mpi-operator/crds/%s is not config/crd/bases/%s: run make manifests", name, name)
	}
	crds := renderChart(t, nil).ofKind("CustomResourceDefinition")
	if len(crds) != 1 {
		t.Fatalf("the chart installs %d CRDs, want 1", len(crds))
	}
	w := map[string]any{}
	if err := yaml.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, crds[0].Object); diff != "" {
		t.Errorf("the chart's CRD (-config/crd/bases +chart):\n%s", diff)
	}
}

// TestChartServesListedNamespacesWithRoles: with a list of namespaces the
// operator watches only those, and is granted only those: a Role and
// RoleBinding in each, a ClusterRole for the cluster-scoped
// PriorityClasses alone, and together exactly the generated rules.
func TestChartServesListedNamespacesWithRoles(t *testing.T) {
	namespaces := []string{"team-a", "team-b"}
	objs := renderChart(t, map[string]any{"namespaces": []any{"team-a", "team-b"}})
	d := deployment(t, objs)
	if !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--namespace=team-a,team-b") {
		t.Errorf("args %v, want --namespace=team-a,team-b", d.Spec.Template.Spec.Containers[0].Args)
	}
	want := generatedRoles(t)
	cluster := rulesOf(t, objs, "ClusterRole", "mpi-operator", "")
	for _, r := range cluster {
		if !slices.Equal(r.Resources, []string{"priorityclasses"}) {
			t.Errorf("the ClusterRole grants %v %v in every namespace", r.Resources, r.Verbs)
		}
	}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: d.Spec.Template.Spec.ServiceAccountName, Namespace: chartNS}
	for _, ns := range namespaces {
		got := rulesOf(t, objs, "Role", "mpi-operator-mpijobs", ns)
		all := append(slices.Clone(cluster), got...)
		sortRules(all)
		wantAll := slices.Clone(want["ClusterRole"])
		sortRules(wantAll)
		if diff := cmp.Diff(wantAll, all); diff != "" {
			t.Errorf("namespace %s: ClusterRole + Role rules (-config/rbac +chart):\n%s", ns, diff)
		}
		var rb rbacv1.RoleBinding
		for _, u := range objs.ofKind("RoleBinding") {
			if u.GetNamespace() == ns {
				decode(t, u, &rb)
			}
		}
		if rb.RoleRef.Name != "mpi-operator-mpijobs" || len(rb.Subjects) != 1 || rb.Subjects[0] != sa {
			t.Errorf("namespace %s: RoleBinding %+v, want Role mpi-operator-mpijobs bound to %+v", ns, rb, sa)
		}
	}
	for _, u := range objs.ofKind("Role") {
		if u.GetNamespace() != chartNS && !slices.Contains(namespaces, u.GetNamespace()) {
			t.Errorf("a Role in namespace %q, not one the operator serves", u.GetNamespace())
		}
	}
	if diff := cmp.Diff(want["Role"], rulesOf(t, objs, "Role", "mpi-operator", chartNS)); diff != "" {
		t.Errorf("leader election Role rules (-config/rbac +chart):\n%s", diff)
	}
}

func sortRules(rules []rbacv1.PolicyRule) {
	slices.SortFunc(rules, func(a, b rbacv1.PolicyRule) int {
		return strings.Compare(strings.Join(a.APIGroups, ",")+"/"+strings.Join(a.Resources, ","),
			strings.Join(b.APIGroups, ",")+"/"+strings.Join(b.Resources, ","))
	})
}

func deployment(t *testing.T, objs chartObjects) *appsv1.Deployment {
	t.Helper()
	ds := objs.ofKind("Deployment")
	if len(ds) != 1 {
		t.Fatalf("the chart renders %d Deployments, want 1", len(ds))
	}
	d := &appsv1.Deployment{}
	decode(t, ds[0], d)
	return d
}

// TestChartValuesReachTheOperator: each value becomes the flag or field
// it documents, and a flag left at the binary's default is not passed.
func TestChartValuesReachTheOperator(t *testing.T) {
	cases := map[string]struct {
		values       map[string]any
		wantArgs     []string
		notArgs      []string
		wantPDB      bool
		wantAffinity bool
	}{
		"defaults": {
			wantArgs: []string{"--leader-elect=true", "--kube-api-qps=500", "--kube-api-burst=1000",
				"--concurrency=50", "--create-parallelism=150", "--controller-queue-rate-limit=10", "--controller-queue-burst=100"},
			notArgs: []string{"--namespace", "--gang-scheduling", "--cluster-domain",
				"--leader-elect-lease-duration", "--leader-elect-renew-deadline", "--leader-elect-retry-period"},
			wantPDB: true, wantAffinity: true,
		},
		"client limits": {
			values: map[string]any{"client": map[string]any{"qps": 2.5, "burst": 5, "concurrency": 3,
				"createParallelism": 7, "queueRateLimit": 1.5, "queueBurst": 9}},
			wantArgs: []string{"--kube-api-qps=2.5", "--kube-api-burst=5", "--concurrency=3",
				"--create-parallelism=7", "--controller-queue-rate-limit=1.5", "--controller-queue-burst=9"},
			wantPDB: true, wantAffinity: true,
		},
		"gang scheduling, cluster domain, metrics port": {
			values:   map[string]any{"gangScheduling": "volcano", "clusterDomain": "corp.example", "metrics": map[string]any{"port": 9090}},
			wantArgs: []string{"--gang-scheduling=volcano", "--cluster-domain=corp.example", "--metrics-bind-address=:9090"},
			wantPDB:  true, wantAffinity: true,
		},
		"lease timings": {
			values: map[string]any{"leaderElection": map[string]any{"leaseDuration": "60s", "renewDeadline": "40s", "retryPeriod": "5s"}},
			wantArgs: []string{"--leader-elect-lease-duration=60s", "--leader-elect-renew-deadline=40s",
				"--leader-elect-retry-period=5s"},
			wantPDB: true, wantAffinity: true,
		},
		"one replica": {
			values:   map[string]any{"replicas": 1, "leaderElection": map[string]any{"enabled": false}},
			wantArgs: []string{"--leader-elect=false"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := renderChart(t, tc.values)
			d := deployment(t, objs)
			args := d.Spec.Template.Spec.Containers[0].Args
			for _, a := range tc.wantArgs {
				if !slices.Contains(args, a) {
					t.Errorf("args %v lack %s", args, a)
				}
			}
			for _, a := range args {
				for _, not := range tc.notArgs {
					if strings.HasPrefix(a, not+"=") {
						t.Errorf("args %v pass %s", args, a)
					}
				}
			}
			if got := len(objs.ofKind("PodDisruptionBudget")) == 1; got != tc.wantPDB {
				t.Errorf("PodDisruptionBudget rendered: %v, want %v", got, tc.wantPDB)
			}
			if got := d.Spec.Template.Spec.Affinity != nil; got != tc.wantAffinity {
				t.Errorf("anti-affinity rendered: %v, want %v", got, tc.wantAffinity)
			}
		})
	}
}

// TestChartPassesOnlyFlagsTheBinaryHas builds the operator and checks
// that every flag the chart passes, at its defaults and with every
// optional flag set, is one the binary defines: an unknown flag stops the
// operator at start.
func TestChartPassesOnlyFlagsTheBinaryHas(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mpi-operator")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/mpi-operator").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	help, _ := exec.Command(bin, "-help").CombinedOutput()
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+-([\w-]+)`).FindAllStringSubmatch(string(help), -1) {
		defined[m[1]] = true
	}
	if !defined["leader-elect"] {
		t.Fatalf("could not read the binary's flags from -help:\n%s", help)
	}
	for name, values := range map[string]map[string]any{
		"defaults":            nil,
		"every optional flag": {"namespaces": []any{"a"}, "gangScheduling": "volcano", "clusterDomain": "cluster.local"},
		"local cluster":       valuesFile(t, "../../hack/cluster/operator-values.yaml"),
	} {
		for _, a := range deployment(t, renderChart(t, values)).Spec.Template.Spec.Containers[0].Args {
			flag := strings.TrimPrefix(strings.SplitN(a, "=", 2)[0], "--")
			if !defined[flag] {
				t.Errorf("%s: the chart passes %s, which the binary does not define", name, a)
			}
		}
	}
}

// TestLocalClusterValues: hack/cluster/operator-values.yaml installs the
// release as a user would, its image pulled by the release's name, and
// changes only the CPU it requests (none).
func TestLocalClusterValues(t *testing.T) {
	d := deployment(t, renderChart(t, valuesFile(t, "../../hack/cluster/operator-values.yaml")))
	c := d.Spec.Template.Spec.Containers[0]
	if want := version.Image + ":" + version.Version; c.Image != want || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("image %s pulled %s, want %s, IfNotPresent", c.Image, c.ImagePullPolicy, want)
	}
	if cpu, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		t.Errorf("requests %s CPU, want none", cpu.String())
	}
	if mem := c.Resources.Requests[corev1.ResourceMemory]; mem.Cmp(resource.MustParse("64Mi")) != 0 {
		t.Errorf("requests %s memory, want the chart's 64Mi", mem.String())
	}
	if len(c.Env) != 0 {
		t.Errorf("env %v, want none: the release's Pod reaches the API server through the kubernetes Service", c.Env)
	}
}

// The Lease may live in another namespace (leaderElection.namespace, the
// flag --leader-election-namespace): the Role that lets the operator take
// it, and its binding, go there too. They stayed in the release's
// namespace, and the operator could not take its Lease.
func TestChartLeaseRoleFollowsTheLeasesNamespace(t *testing.T) {
	objs := renderChart(t, map[string]any{"leaderElection": map[string]any{"namespace": "locks"}})
	d := deployment(t, objs)
	if !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--leader-election-namespace=locks") {
		t.Errorf("args %v, want --leader-election-namespace=locks", d.Spec.Template.Spec.Containers[0].Args)
	}
	if diff := cmp.Diff(generatedRoles(t)["Role"], rulesOf(t, objs, "Role", "mpi-operator", "locks")); diff != "" {
		t.Errorf("leader election Role rules in locks (-config/rbac +chart):\n%s", diff)
	}
	var found bool
	for _, u := range objs.ofKind("RoleBinding") {
		var rb rbacv1.RoleBinding
		decode(t, u, &rb)
		if rb.Namespace == "locks" && rb.RoleRef.Name == "mpi-operator" && len(rb.Subjects) == 1 && rb.Subjects[0].Namespace == chartNS {
			found = true
		}
	}
	if !found {
		t.Error("no RoleBinding in locks binding the Role to the operator's ServiceAccount")
	}
}
