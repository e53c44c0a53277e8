package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
	"github.com/mpi-operator/mpi-operator/test/integration/envtestutil"
	"github.com/mpi-operator/mpi-operator/test/upstream"
)

// admissionBaseManifest is the job every admission case starts from: the CRD accepts
// it as is (TestAdmissionRefusesInvalidManifests checks that first). It has
// no name: a case that does not set one gets a name of its own.
const admissionBaseManifest = `
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: mpi
            command: [mpirun, -n, "1", hostname]
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: worker
            image: mpi
`

// admissionCase is a manifest the API server must refuse.
type admissionCase struct {
	// patch is an RFC 7386 merge patch, in YAML, applied to admissionBaseManifest:
	// maps merge, null deletes a key, anything else replaces.
	patch string
	// manifest, if set, is the whole manifest instead (patch is ignored).
	manifest string
	// want are substrings the server's message must all contain: the field
	// path or name, and what is wrong with it.
	want []string
}

func TestAdmissionRefusesInvalidManifests(t *testing.T) {
	ns := newNamespace(t)
	name54 := strings.Repeat("a", 54)
	name53 := strings.Repeat("b", 53)

	// Controls: without them a broken base manifest, or a name rule off by
	// one the other way, would make every refusal below pass for the wrong
	// reason. They are suspended so the controller makes no Pods for them.
	controls := map[string]string{
		"the base manifest": ``,
		"54-character name with 10 workers, the last being <name>-worker-9 (63)": fmt.Sprintf(
			`{metadata: {name: %s}, spec: {mpiReplicaSpecs: {Worker: {replicas: 10}}}}`, name54),
		"53-character name with 100 workers, the last being <name>-worker-99 (63)": fmt.Sprintf(
			`{metadata: {name: %s}, spec: {mpiReplicaSpecs: {Worker: {replicas: 100}}}}`, name53),
	}
	for _, what := range slices.Sorted(maps.Keys(controls)) {
		obj := manifestFor(t, admissionCase{patch: controls[what]}, ns, "control")
		if err := unstructured.SetNestedField(obj.Object, true, "spec", "runPolicy", "suspend"); err != nil {
			t.Fatal(err)
		}
		if err := k8s.Create(context.Background(), obj); err != nil {
			t.Fatalf("control %q was refused, so the cases below prove nothing: %v", what, err)
		}
	}

	cases := map[string]admissionCase{
		// mpiReplicaSpecs: roles and replicas.
		"no Launcher": {
			patch: `{spec: {mpiReplicaSpecs: {Launcher: null}}}`,
			want:  []string{"spec.mpiReplicaSpecs.Launcher is required"},
		},
		"Launcher is null": {
			manifest: `
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: null-launcher}
spec:
  mpiReplicaSpecs:
    Launcher: null
    Worker: {replicas: 1, template: {spec: {containers: [{name: worker, image: mpi}]}}}
`,
			want: []string{"spec.mpiReplicaSpecs.Launcher"},
		},
		"Launcher replicas 0": {
			patch: `{spec: {mpiReplicaSpecs: {Launcher: {replicas: 0}}}}`,
			want:  []string{"spec.mpiReplicaSpecs.Launcher.replicas must be 1"},
		},
		"Launcher replicas 2": {
			patch: `{spec: {mpiReplicaSpecs: {Launcher: {replicas: 2}}}}`,
			want:  []string{"spec.mpiReplicaSpecs.Launcher.replicas must be 1"},
		},
		"lower-case launcher key instead of Launcher": {
			patch: `{spec: {mpiReplicaSpecs: {Launcher: null, launcher: {replicas: 1, template: {spec: {containers: [{name: l, image: mpi}]}}}}}}`,
			want:  []string{"spec.mpiReplicaSpecs may only have the keys Launcher and Worker"},
		},
		"PS role next to Launcher": {
			patch: `{spec: {mpiReplicaSpecs: {Worker: null, PS: {replicas: 1, template: {spec: {containers: [{name: ps, image: mpi}]}}}}}}`,
			want:  []string{"spec.mpiReplicaSpecs may only have the keys Launcher and Worker"},
		},
		"three roles": {
			patch: `{spec: {mpiReplicaSpecs: {PS: {replicas: 1, template: {spec: {containers: [{name: ps, image: mpi}]}}}}}}`,
			want:  []string{"spec.mpiReplicaSpecs", "must have at most 2 items"},
		},
		"Worker replicas -1": {
			patch: `{spec: {mpiReplicaSpecs: {Worker: {replicas: -1}}}}`,
			want:  []string{"spec.mpiReplicaSpecs.Worker.replicas", "greater than or equal to 0"},
		},
		"no mpiReplicaSpecs": {
			patch: `{spec: {mpiReplicaSpecs: null}}`,
			want:  []string{"spec.mpiReplicaSpecs: Required value"},
		},
		"no spec": {
			patch: `{spec: null}`,
			want:  []string{"spec: Required value"},
		},

		// Pod templates: every role needs at least one container.
		"Launcher template with an empty Pod spec": {
			patch: `{spec: {mpiReplicaSpecs: {Launcher: {template: {spec: {containers: null}}}}}}`,
			want:  []string{"spec.mpiReplicaSpecs.Launcher.template.spec.containers", "Required value"},
		},
		"Launcher template with an empty containers list": {
			patch: `{spec: {mpiReplicaSpecs: {Launcher: {template: {spec: {containers: []}}}}}}`,
			want:  []string{"spec.mpiReplicaSpecs[Launcher]", "template.spec.containers must list at least one container"},
		},
		"Launcher without a template": {
			patch: `{spec: {mpiReplicaSpecs: {Launcher: {template: null}}}}`,
			want:  []string{"spec.mpiReplicaSpecs[Launcher]", "template.spec.containers must list at least one container"},
		},
		"Worker template with an empty Pod spec": {
			patch: `{spec: {mpiReplicaSpecs: {Worker: {template: {spec: {containers: null}}}}}}`,
			want:  []string{"spec.mpiReplicaSpecs.Worker.template.spec.containers", "Required value"},
		},

		// Enums.
		"mpiImplementation MVAPICH": {
			patch: `{spec: {mpiImplementation: MVAPICH}}`,
			want:  []string{"spec.mpiImplementation", `Unsupported value: "MVAPICH"`},
		},
		"launcherCreationPolicy Later": {
			patch: `{spec: {launcherCreationPolicy: Later}}`,
			want:  []string{"spec.launcherCreationPolicy", `Unsupported value: "Later"`},
		},
		"cleanPodPolicy Sometimes": {
			patch: `{spec: {runPolicy: {cleanPodPolicy: Sometimes}}}`,
			want:  []string{"spec.runPolicy.cleanPodPolicy", `Unsupported value: "Sometimes"`},
		},
		"Worker restartPolicy Sometimes": {
			patch: `{spec: {mpiReplicaSpecs: {Worker: {restartPolicy: Sometimes}}}}`,
			want:  []string{"spec.mpiReplicaSpecs.Worker.restartPolicy", `Unsupported value: "Sometimes"`},
		},
		"Launcher restartPolicy Always": {
			patch: `{spec: {mpiReplicaSpecs: {Launcher: {restartPolicy: Always}}}}`,
			want:  []string{"spec.mpiReplicaSpecs.Launcher.restartPolicy must be OnFailure, Never or ExitCode"},
		},
		"managedBy someone-else": {
			patch: `{spec: {runPolicy: {managedBy: someone-else}}}`,
			want:  []string{"spec.runPolicy.managedBy", `Unsupported value: "someone-else"`},
		},

		// Numbers and paths.
		"slotsPerWorker 0": {
			patch: `{spec: {slotsPerWorker: 0}}`,
			want:  []string{"spec.slotsPerWorker", "greater than or equal to 1"},
		},
		"slotsPerWorker is a string": {
			patch: `{spec: {slotsPerWorker: two}}`,
			want:  []string{"spec.slotsPerWorker", "must be of type integer"},
		},
		"sshAuthMountPath relative": {
			patch: `{spec: {sshAuthMountPath: home/mpiuser/.ssh}}`,
			want:  []string{"spec.sshAuthMountPath must be an absolute path other than /"},
		},
		"sshAuthMountPath /": {
			patch: `{spec: {sshAuthMountPath: /}}`,
			want:  []string{"spec.sshAuthMountPath must be an absolute path other than /"},
		},
		"backoffLimit -1": {
			patch: `{spec: {runPolicy: {backoffLimit: -1}}}`,
			want:  []string{"spec.runPolicy.backoffLimit", "greater than or equal to 0"},
		},
		"activeDeadlineSeconds 0": {
			patch: `{spec: {runPolicy: {activeDeadlineSeconds: 0}}}`,
			want:  []string{"spec.runPolicy.activeDeadlineSeconds", "greater than or equal to 1"},
		},
		"activeDeadlineSeconds -5": {
			patch: `{spec: {runPolicy: {activeDeadlineSeconds: -5}}}`,
			want:  []string{"spec.runPolicy.activeDeadlineSeconds", "greater than or equal to 1"},
		},
		"ttlSecondsAfterFinished -1": {
			patch: `{spec: {runPolicy: {ttlSecondsAfterFinished: -1}}}`,
			want:  []string{"spec.runPolicy.ttlSecondsAfterFinished", "greater than or equal to 0"},
		},
		"schedulingPolicy minAvailable -1": {
			patch: `{spec: {runPolicy: {schedulingPolicy: {minAvailable: -1}}}}`,
			want:  []string{"spec.runPolicy.schedulingPolicy.minAvailable", "greater than or equal to 0"},
		},
		"schedulingPolicy scheduleTimeoutSeconds -1": {
			patch: `{spec: {runPolicy: {schedulingPolicy: {scheduleTimeoutSeconds: -1}}}}`,
			want:  []string{"spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds", "greater than or equal to 0"},
		},

		// Names: the job's Service and Pods are named after it.
		"name with upper case": {
			patch: `{metadata: {name: Pi}}`,
			want:  []string{"metadata.name", `"Pi"`},
		},
		"name starting with a digit": {
			patch: `{metadata: {name: 1pi}}`,
			want:  []string{"metadata.name must be a DNS-1035 label"},
		},
		"name with a dot": {
			patch: `{metadata: {name: pi.v2}}`,
			want:  []string{"metadata.name must be a DNS-1035 label"},
		},
		"name of 55 characters, too long for <name>-launcher": {
			patch: fmt.Sprintf(`{metadata: {name: %s}}`, strings.Repeat("a", 55)),
			want:  []string{"metadata.name must be at most 54 characters"},
		},
		"54-character name with 11 workers, the last being <name>-worker-10 (64)": {
			patch: fmt.Sprintf(`{metadata: {name: %s}, spec: {mpiReplicaSpecs: {Worker: {replicas: 11}}}}`, name54),
			want:  []string{"metadata.name is too long for spec.mpiReplicaSpecs.Worker.replicas"},
		},
		"53-character name with 101 workers, the last being <name>-worker-100 (64)": {
			patch: fmt.Sprintf(`{metadata: {name: %s}, spec: {mpiReplicaSpecs: {Worker: {replicas: 101}}}}`, name53),
			want:  []string{"metadata.name is too long for spec.mpiReplicaSpecs.Worker.replicas"},
		},
	}

	for i, name := range slices.Sorted(maps.Keys(cases)) {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			obj := manifestFor(t, tc, ns, fmt.Sprintf("case-%d", i))
			err := k8s.Create(context.Background(), obj)
			switch {
			case err == nil:
				manifest, _ := json.Marshal(obj.Object)
				t.Errorf("the server accepted the manifest:\n%s", manifest)
			case !apierrors.IsInvalid(err):
				t.Errorf("refused, but not as Invalid (reason %s): %v", apierrors.ReasonForError(err), err)
			default:
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("refused, but the message lacks %q:\n%v", w, err)
					}
				}
				checkCausesNameTheirField(t, err)
			}
		})
	}
}

// apiServersNote is the API server's own cause, without a field, that
// follows a schema error: the CEL rules were not run. It is not ours to
// place.
const apiServersNote = "some validation rules were not checked because the object was invalid"

// checkCausesNameTheirField fails the test for each cause of a refusal
// that names no field: a root-level CEL rule without fieldPath is
// reported at "<nil>", and a user cannot tell what to fix.
func checkCausesNameTheirField(t *testing.T, err error) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		t.Errorf("refusal without details: %v", err)
		return
	}
	for _, c := range status.Status().Details.Causes {
		if (c.Field == "" || c.Field == "<nil>") && !strings.Contains(c.Message, apiServersNote) {
			t.Errorf("cause %q names no field (%q)", c.Message, c.Field)
		}
	}
}

func TestManagedByIsImmutable(t *testing.T) {
	ns := newNamespace(t)
	cases := map[string]struct {
		from, to *string
	}{
		"unset to MultiKueue":                                {from: nil, to: ptr.To(kubeflow.MultiKueueController)},
		"mpi-operator to MultiKueue":                         {from: ptr.To(kubeflow.KubeflowJobController), to: ptr.To(kubeflow.MultiKueueController)},
		"MultiKueue to mpi-operator":                         {from: ptr.To(kubeflow.MultiKueueController), to: ptr.To(kubeflow.KubeflowJobController)},
		"MultiKueue to unset":                                {from: ptr.To(kubeflow.MultiKueueController), to: nil},
		"MultiKueue to the empty string (also the operator)": {from: ptr.To(kubeflow.MultiKueueController), to: ptr.To("")},
	}
	for i, name := range slices.Sorted(maps.Keys(cases)) {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			w := testjob.MakeMPIJob(fmt.Sprintf("managed-%d", i), ns)
			if tc.from != nil {
				w.ManagedBy(*tc.from)
			}
			job := createJob(t, w.Obj())

			err := tryUpdateJob(job, func(j *kubeflow.MPIJob) { j.Spec.RunPolicy.ManagedBy = tc.to })
			switch {
			case err == nil:
				t.Errorf("the server accepted managedBy %s -> %s", showManagedBy(tc.from), showManagedBy(tc.to))
			case !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.runPolicy.managedBy is immutable"):
				t.Errorf("refused, but not as Invalid with \"spec.runPolicy.managedBy is immutable\" (reason %s): %v",
					apierrors.ReasonForError(err), err)
			default:
				checkCausesNameTheirField(t, err)
			}
			got, err := getJob(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			if showManagedBy(got.Spec.RunPolicy.ManagedBy) != showManagedBy(tc.from) {
				t.Errorf("stored managedBy is %s, want %s", showManagedBy(got.Spec.RunPolicy.ManagedBy), showManagedBy(tc.from))
			}

			// Control: the rule must not refuse every update of the spec.
			if err := tryUpdateJob(job, func(j *kubeflow.MPIJob) { j.Spec.SlotsPerWorker = ptr.To[int32](2) }); err != nil {
				t.Errorf("changing slotsPerWorker with managedBy %s unchanged was refused: %v", showManagedBy(tc.from), err)
			}
		})
	}
}

// TestUpstreamExamplesAreAccepted creates every MPIJob manifest of
// upstream's examples/v2beta1, read from upstream's own module, and checks
// that the API server stored every field it set (none pruned) and filled
// in upstream's defaults.
func TestUpstreamExamplesAreAccepted(t *testing.T) {
	examples, err := filepath.Glob(filepath.Join(upstream.Dir(t), "examples", "v2beta1", "*", "*.yaml"))
	if err != nil || len(examples) < 5 {
		t.Fatalf("upstream's examples: %v, %v", examples, err)
	}
	for _, path := range examples {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			expectAcceptedAsWritten(t, raw)
		})
	}
}

// TestOurExamplesAreAccepted does the same for every MPIJob of this
// repository's examples/v2beta1: the e2e tests run them on a cluster, this
// checks without one that no field they set is pruned. Documents of other
// kinds (Kueue's queues, in files named *queues.yaml) are skipped; any
// other file without an MPIJob fails.
func TestOurExamplesAreAccepted(t *testing.T) {
	examples, err := filepath.Glob(filepath.Join("..", "..", "examples", "v2beta1", "*", "*.yaml"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("our examples: %v, %v", examples, err)
	}
	for _, path := range examples {
		rel, _ := filepath.Rel(filepath.Join("..", "..", "examples", "v2beta1"), path)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
		jobs := 0
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			if decodeManifest(t, string(doc)).GetKind() != kubeflow.Kind {
				continue
			}
			jobs++
			t.Run(filepath.ToSlash(rel), func(t *testing.T) { expectAcceptedAsWritten(t, doc) })
		}
		if jobs == 0 && !strings.HasSuffix(rel, "queues.yaml") {
			t.Errorf("%s holds no MPIJob", rel)
		}
	}
}

// expectAcceptedAsWritten creates the MPIJob manifest in a new namespace
// and checks that the API server stored every field it set (none pruned)
// and filled in upstream's defaults.
func expectAcceptedAsWritten(t *testing.T, raw []byte) {
	t.Helper()
	ns := newNamespace(t)
	ctx := context.Background()
	obj := decodeManifest(t, string(raw))
	obj.SetNamespace(ns)
	original := obj.DeepCopy()
	if err := k8s.Create(ctx, obj); err != nil {
		t.Fatalf("the server refused the example: %v", err)
	}

	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(kubeflow.GroupVersion.WithKind(kubeflow.Kind))
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: obj.GetName()}, got); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		path []string
		want any
	}{
		{[]string{"launcherCreationPolicy"}, "AtStartup"},
		{[]string{"runPolicy", "suspend"}, false},
		{[]string{"runLauncherAsWorker"}, false},
	} {
		v, found, err := unstructured.NestedFieldNoCopy(got.Object, append([]string{"spec"}, d.path...)...)
		if err != nil || !found || v != d.want {
			t.Errorf("spec.%s: got %v (found %t, err %v), want the CRD default %v",
				strings.Join(d.path, "."), v, found, err, d.want)
		}
	}

	// Every field the manifest set must come back as it was: restrict
	// the stored spec to the manifest's keys (dropping only what
	// defaulting added) and compare. A pruned field shows up as
	// missing in the diff.
	want := dropNulls(original.Object["spec"]).(map[string]any)
	stored, ok := got.Object["spec"].(map[string]any)
	if !ok {
		t.Fatalf("stored object has no spec: %v", got.Object)
	}
	for _, key := range slices.Sorted(maps.Keys(want)) {
		if diff := cmp.Diff(want[key], restrictTo(want[key], stored[key])); diff != "" {
			t.Errorf("spec.%s did not survive the round trip (-manifest +stored):\n%s", key, diff)
		}
	}
}

// dropNulls removes the keys whose value is null: in a Kubernetes object
// null means unset (pi-mpich.yaml has an empty "command:"), and the API
// server stores nothing for it.
func dropNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if e != nil {
				out[k] = dropNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = dropNulls(e)
		}
		return out
	}
	return v
}

// decodeManifest decodes a YAML manifest into an unstructured object, with
// integers as int64 as the unstructured helpers expect.
func decodeManifest(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
		t.Fatalf("decoding manifest: %v\n%s", err, manifest)
	}
	return &unstructured.Unstructured{Object: obj}
}

// manifestFor builds a case's object in ns; a case that leaves the name
// unset is given defaultName.
func manifestFor(t *testing.T, tc admissionCase, ns, defaultName string) *unstructured.Unstructured {
	t.Helper()
	var obj *unstructured.Unstructured
	if tc.manifest != "" {
		obj = decodeManifest(t, tc.manifest)
	} else {
		obj = decodeManifest(t, admissionBaseManifest)
		if strings.TrimSpace(tc.patch) != "" {
			mergePatch(obj.Object, decodeManifest(t, tc.patch).Object)
		}
	}
	if obj.GetName() == "" {
		obj.SetName(defaultName)
	}
	obj.SetNamespace(ns)
	return obj
}

// mergePatch applies an RFC 7386 JSON merge patch to dst in place.
func mergePatch(dst, patch map[string]any) {
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(dst, k)
		case map[string]any:
			dv, ok := dst[k].(map[string]any)
			if !ok {
				dv = map[string]any{}
				dst[k] = dv
			}
			mergePatch(dv, pv)
		default:
			dst[k] = v
		}
	}
}

// restrictTo returns got reduced to the shape of want: maps keep only the
// keys want has, lists of want's length are restricted element by element,
// anything else is returned as is.
func restrictTo(want, got any) any {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return got
		}
		out := make(map[string]any, len(w))
		for k := range w {
			if v, ok := g[k]; ok {
				out[k] = restrictTo(w[k], v)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return got
		}
		out := make([]any, len(g))
		for i := range g {
			out[i] = restrictTo(w[i], g[i])
		}
		return out
	}
	return got
}

// tryUpdateJob applies mutate to the latest version of the job and returns
// the server's answer, retrying only on conflicts with the controller's
// status writes.
func tryUpdateJob(job *kubeflow.MPIJob, mutate func(*kubeflow.MPIJob)) error {
	ctx := context.Background()
	deadline := time.Now().Add(envtestutil.Timeout)
	for {
		got, err := getJob(ctx, job)
		if err != nil {
			return err
		}
		mutate(got)
		err = k8s.Update(ctx, got)
		if !apierrors.IsConflict(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func showManagedBy(s *string) string {
	if s == nil {
		return "unset"
	}
	return fmt.Sprintf("%q", *s)
}
