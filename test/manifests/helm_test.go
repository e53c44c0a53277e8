package manifests

import (
	"os"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

const (
	chartDir = "../../charts/mpi-operator"
	// chartNS is the namespace the chart is rendered into, config/default's.
	chartNS = "mpi-operator"
)

// object is one rendered document, decoded, with its YAML.
type object struct {
	u   *unstructured.Unstructured
	raw []byte
}

// chartObjects is one rendering of the chart, in the order Helm gives.
type chartObjects []object

// renderChart renders the chart as `helm template --include-crds` does,
// with the Helm v4 library: values are merged over values.yaml.
func renderChart(t *testing.T, values map[string]any) chartObjects {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = "mpi-operator"
	install.Namespace = chartNS
	install.Replace = true
	install.IncludeCRDs = true
	if values == nil {
		values = map[string]any{}
	}
	r, err := install.Run(chrt, values)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	rel, ok := r.(*release.Release)
	if !ok {
		t.Fatalf("helm returned a %T, not a v1 release", r)
	}
	var objs chartObjects
	for _, doc := range strings.Split(rel.Manifest, "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("decoding the chart's output: %v\n%s", err, doc)
		}
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, object{u: u, raw: []byte(doc)})
	}
	return objs
}

// byName is the rendering keyed like a kustomize build: kind/name. It
// fails the test if two objects share a key (they would be in different
// namespaces, which the default install never has).
func (c chartObjects) byName(t *testing.T) rendered {
	t.Helper()
	r := rendered{}
	for _, o := range c {
		key := o.u.GetKind() + "/" + o.u.GetName()
		if _, dup := r[key]; dup {
			t.Fatalf("the chart renders %s twice", key)
		}
		r[key] = o.raw
	}
	return r
}

// ofKind returns the objects of that kind.
func (c chartObjects) ofKind(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range c {
		if o.u.GetKind() == kind {
			out = append(out, o.u)
		}
	}
	return out
}

// valuesFile reads a Helm values file.
func valuesFile(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{}
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return v
}

// decode converts an unstructured object into a typed one.
func decode(t *testing.T, u *unstructured.Unstructured, obj any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		t.Fatalf("decoding %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}
