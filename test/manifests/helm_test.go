package manifests

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/mpi-operator/mpi-operator/test/internal/chartrender"
)

const (
	chartDir = "../../charts/mpi-operator"
	// chartNS is the namespace the chart is rendered into, config/default's.
	chartNS = "mpi-operator"
)

// chartObjects is one rendering of the chart, in the order Helm gives.
type chartObjects []chartrender.Object

// renderChart renders the chart as `helm template --include-crds` does,
// with the Helm v4 library: values are merged over values.yaml.
func renderChart(t *testing.T, values map[string]any) chartObjects {
	t.Helper()
	objs, err := chartrender.Render(chartDir, chartNS, values)
	if err != nil {
		t.Fatal(err)
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
		key := o.GetKind() + "/" + o.GetName()
		if _, dup := r[key]; dup {
			t.Fatalf("the chart renders %s twice", key)
		}
		r[key] = o.Raw
	}
	return r
}

// ofKind returns the objects of that kind.
func (c chartObjects) ofKind(kind string) []*unstructured.Unstructured {
	return chartrender.OfKind(c, kind)
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
