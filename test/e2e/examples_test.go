//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// The tests of examples/v2beta1 apply its files unchanged, with upstream's
// public images pulled through the cluster's docker.io mirror. Each job
// asks for 1 CPU per Pod, 3 or more CPUs on two nodes of 2: the tests are
// not parallel, so they run one at a time, before the parallel tests.

// examplesDir is examples/v2beta1, from this package's directory.
const examplesDir = "../../examples/v2beta1"

// exampleTests names the test that applies each file of examplesDir.
// TestExamplesAreAllAppliedByTests fails on a file missing here; a test reads
// only its own files (readExample) and fails unless it read all of them.
var exampleTests = map[string]string{
	"pi/pi.yaml":                     "TestExamplePi",
	"pi/pi-mpich.yaml":               "TestExamplePi",
	"pi/pi-root.yaml":                "TestExamplePi",
	"pi/pi-mpich-root.yaml":          "TestExamplePi",
	"hostnetwork/pi.yaml":            "TestExampleHostNetwork",
	"kueue/queues.yaml":              "TestExampleKueue",
	"kueue/pi.yaml":                  "TestExampleKueue",
	"multikueue/manager-queues.yaml": "TestExampleKueue",
	"elastic/pi.yaml":                "TestExampleElastic",
	"gang/pi.yaml":                   "TestExampleGang",
}

// TestExamplesAreAllAppliedByTests: every file under examples/v2beta1 is
// one that a test applies, and every file the table names exists.
func TestExamplesAreAllAppliedByTests(t *testing.T) {
	found := map[string]bool{}
	err := filepath.WalkDir(examplesDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(examplesDir, path)
		found[filepath.ToSlash(rel)] = true
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range slices.Sorted(maps.Keys(found)) {
		if exampleTests[rel] == "" {
			t.Errorf("examples/v2beta1/%s is applied by no test: add it to exampleTests and apply it in a test", rel)
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(exampleTests)) {
		if !found[rel] {
			t.Errorf("exampleTests names examples/v2beta1/%s, which does not exist", rel)
		}
	}
}

var (
	exampleReadsMu sync.Mutex
	exampleReads   = map[string]bool{}
)

// exampleTest starts a test of examples: when it ends (passed), it must
// have read every file exampleTests gives it.
func exampleTest(t *testing.T) {
	t.Helper()
	name := t.Name()
	t.Cleanup(func() {
		if t.Failed() || t.Skipped() {
			return
		}
		exampleReadsMu.Lock()
		defer exampleReadsMu.Unlock()
		for _, rel := range slices.Sorted(maps.Keys(exampleTests)) {
			if exampleTests[rel] == name && !exampleReads[rel] {
				t.Errorf("%s never applied examples/v2beta1/%s, which exampleTests gives it", name, rel)
			}
		}
	})
}

// readExample reads a file of examples/v2beta1 that exampleTests gives to
// the running test.
func readExample(t *testing.T, rel string) []byte {
	t.Helper()
	top, _, _ := strings.Cut(t.Name(), "/")
	if owner := exampleTests[rel]; owner != top {
		t.Fatalf("%s reads examples/v2beta1/%s, which exampleTests gives to %q", top, rel, owner)
	}
	data, err := os.ReadFile(filepath.Join(examplesDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	exampleReadsMu.Lock()
	exampleReads[rel] = true
	exampleReadsMu.Unlock()
	return data
}

// applyExample creates every object of a file of examples/v2beta1 in ns,
// in the file's order, and returns its MPIJobs. An MPIJob's document is
// sent as it is (createRaw); other kinds are created from their decoded
// document, namespaced ones in ns, cluster-scoped ones deleted when the
// test ends.
func applyExample(t *testing.T, ns, rel string) []*kubeflow.MPIJob {
	t.Helper()
	return applyExampleOn(t, localCluster(), ns, rel)
}

// applyExampleOn is applyExample on the cluster cl.
func applyExampleOn(t *testing.T, cl cluster, ns, rel string) []*kubeflow.MPIJob {
	t.Helper()
	var jobs []*kubeflow.MPIJob
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(readExample(t, rel))))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if len(obj.Object) == 0 {
			continue // comments only
		}
		if obj.GetObjectKind().GroupVersionKind() == kubeflow.GroupVersion.WithKind(kubeflow.Kind) {
			jobs = append(jobs, createRawOn(t, cl.cs, ns, doc, "application/yaml"))
			continue
		}
		mapping, err := cl.c.RESTMapper().RESTMapping(obj.GroupVersionKind().GroupKind(), obj.GroupVersionKind().Version)
		if err != nil {
			t.Fatalf("%s: %s is not served on the %s: %v", rel, obj.GroupVersionKind(), cl.name, err)
		}
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			obj.SetNamespace(ns)
		}
		if obj.GetNamespace() == "" {
			createClusterScoped(t, cl.c, obj)
			continue
		}
		if err := cl.c.Create(context.Background(), obj); err != nil {
			t.Fatalf("%s: creating %s %s on the %s: %v", rel, obj.GetKind(), obj.GetName(), cl.name, err)
		}
	}
	return jobs
}

// exampleJob applies a file of examples/v2beta1 that holds one MPIJob, in
// a new namespace, and returns the job.
func exampleJob(t *testing.T, rel string) *kubeflow.MPIJob {
	t.Helper()
	jobs := applyExample(t, newNamespace(t), rel)
	if len(jobs) != 1 {
		t.Fatalf("%s holds %d MPIJobs, want 1", rel, len(jobs))
	}
	return jobs[0]
}

// createClusterScoped creates an example's cluster-scoped object, whose
// name is the example's and so the same in every run, and deletes it when
// the test ends. One that an earlier run deleted may still be going (Kueue
// keeps a ClusterQueue until its Workloads, in that run's namespace, are
// gone): it waits for it. One not being deleted is someone else's.
func createClusterScoped(t *testing.T, c client.Client, obj *unstructured.Unstructured) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, obj.DeepCopy())
		if !apierrors.IsAlreadyExists(err) {
			return true, err
		}
		old := &unstructured.Unstructured{}
		old.SetGroupVersionKind(obj.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), old); err == nil && old.GetDeletionTimestamp() == nil {
			return false, fmt.Errorf("%s %s already exists, not being deleted", obj.GetKind(), obj.GetName())
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
}
