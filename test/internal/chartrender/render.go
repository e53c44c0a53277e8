package chartrender

import (
	"errors"
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Object is one rendered document, decoded, with its YAML.
type Object struct {
	*unstructured.Unstructured
	Raw []byte
}

// Render renders the chart in dir as release "mpi-operator" in namespace,
// with values merged over its values.yaml, CRDs included, in Helm's order.
func Render(dir, namespace string, values map[string]any) ([]Object, error) {
	chrt, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("loading the chart: %w", err)
	}
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = "mpi-operator"
	install.Namespace = namespace
	install.Replace = true
	install.IncludeCRDs = true
	if values == nil {
		values = map[string]any{}
	}
	r, err := install.Run(chrt, values)
	if err != nil {
		return nil, fmt.Errorf("rendering the chart: %w", err)
	}
	rel, ok := r.(*release.Release)
	if !ok {
		return nil, fmt.Errorf("helm returned a %T, not a v1 release", r)
	}
	var objs []Object
	for _, doc := range strings.Split(rel.Manifest, "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, fmt.Errorf("decoding the chart's output: %w\n%s", err, doc)
		}
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, Object{Unstructured: u, Raw: []byte(doc)})
	}
	if len(objs) == 0 {
		return nil, errors.New("the chart rendered nothing")
	}
	return objs, nil
}

// OfKind returns the objects of that kind.
func OfKind(objs []Object, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o.Unstructured)
		}
	}
	return out
}
