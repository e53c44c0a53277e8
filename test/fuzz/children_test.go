package fuzz

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
	"github.com/mpi-operator/mpi-operator/test/upstream"
)

// FuzzChildrenAreAdmitted: a job that the API server admits and Validate
// accepts, whose templates are valid Pods on their own, yields children
// that the API server accepts. A child refused would leave the job stuck
// in Created with a FailedCreate event, however often it is retried: such
// a job must instead be refused at admission, with a message naming the
// field (or the builder must make a valid child).
//
// The judge is a real kube-apiserver with the CRD installed; every create
// is a server-side dry run, so each input costs a few requests and leaves
// nothing behind. The input is a base job (testjob.Bases, then our example
// and upstream's) and the edits testjob.Edit makes to it; fqdn picks the
// --cluster-domain option, which lengthens every hostname.
func FuzzChildrenAreAdmitted(f *testing.F) {
	bases := append(testjob.Bases(), manifests(f)...)
	for i := range bases {
		f.Add(uint8(i), false, []byte(nil))
		f.Add(uint8(i), true, []byte(nil))
	}
	f.Fuzz(func(t *testing.T, base uint8, fqdn bool, edits []byte) {
		job := bases[int(base)%len(bases)].DeepCopy()
		testjob.Edit(job, edits)
		job.Namespace = namespace
		opts := builder.Options{}
		if fqdn {
			opts.ClusterDomain = "cluster.local"
		}
		checkChildren(t, job, opts)
	})
}

// manifests are the MPIJobs of this repository's examples and of
// upstream's, in a fixed order so that a base's number means the same job
// in every run. Ours come first, pi/pi.yaml the first of them (base 4 of
// the seed corpus is a non-root Open MPI pi with 2 workers, as the example
// it was found with); files of other kinds (Kueue's queues) are skipped.
func manifests(tb testing.TB) []*kubeflow.MPIJob {
	dir := filepath.Join("..", "..", "examples", "v2beta1")
	ours, err := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
	if err != nil || len(ours) == 0 {
		tb.Fatalf("our examples: %v, %v", ours, err)
	}
	first := filepath.Join(dir, "pi", "pi.yaml")
	ours = append([]string{first}, slices.DeleteFunc(ours, func(p string) bool { return p == first })...)
	theirs, err := filepath.Glob(filepath.Join(upstream.Dir(tb), "examples", "v2beta1", "*", "*.yaml"))
	if err != nil || len(theirs) == 0 {
		tb.Fatalf("upstream's examples: %v, %v", theirs, err)
	}
	var jobs []*kubeflow.MPIJob
	for _, path := range append(ours, theirs...) {
		raw, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				tb.Fatalf("%s: %v", path, err)
			}
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				tb.Fatalf("%s: %v", path, err)
			}
			if meta.Kind != kubeflow.Kind {
				continue
			}
			job := &kubeflow.MPIJob{}
			if err := yaml.UnmarshalStrict(doc, job); err != nil {
				tb.Fatalf("%s: %v", path, err)
			}
			jobs = append(jobs, job)
		}
	}
	return jobs
}

// checkChildren sends job to the API server and, if it is admitted, valid
// and its templates are valid Pods, sends each child built from what the
// API server would store. It reports whether it got as far as the
// children.
func checkChildren(t *testing.T, job *kubeflow.MPIJob, opts builder.Options) bool {
	if !admitted(t, job) {
		return false
	}
	kubeflow.SetDefaults(job)
	if errs := kubeflow.Validate(job); len(errs) > 0 {
		// The controller would fail a job the user was told is fine.
		t.Fatalf("the API server admitted a job that Validate refuses: %v", errs.ToAggregate())
	}
	if errs := builder.Validate(job, opts); len(errs) > 0 {
		// The controller fails the job, naming the field.
		return false
	}
	for _, role := range []kubeflow.MPIReplicaType{kubeflow.MPIReplicaTypeLauncher, kubeflow.MPIReplicaTypeWorker} {
		rs := job.Spec.MPIReplicaSpecs[role]
		if rs == nil {
			continue
		}
		// A template that is no valid Pod by itself is the user's error,
		// which no rule of ours could fully foresee: the Pod API's
		// validation is far larger than the CRD's schema.
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "template", Namespace: namespace, Labels: rs.Template.Labels, Annotations: rs.Template.Annotations},
			Spec:       rs.Template.Spec,
		}
		if !admitted(t, pod) {
			return false
		}
	}
	if job.UID == "" {
		job.UID = types.UID("0b5e7f4c-0000-4000-8000-000000000000")
	}
	n := int(job.Workers())
	running := make([]int, n)
	for i := range running {
		running[i] = i
	}
	kids := []client.Object{
		builder.SSHSecret(job, []byte("private"), []byte("public")),
		builder.Service(job),
		builder.ConfigMap(job, running, []byte("public"), opts),
		builder.LauncherJob(job, job.IsSuspended(), opts),
	}
	if n > 0 {
		// The workers differ only in their index.
		for _, i := range slices.Compact([]int{0, n - 1}) {
			kids = append(kids, builder.WorkerPod(job, i, opts))
		}
	}
	for _, kid := range kids {
		if err := k8s.Create(context.Background(), kid, client.DryRunAll); err != nil {
			t.Errorf("the API server refused the %T %s of an admitted, valid job: %v", kid, kid.GetName(), err)
		}
	}
	return true
}

// TestEveryBaseReachesTheChildren: every base job, unedited, is admitted,
// valid and has valid templates. Otherwise the seeds of
// FuzzChildrenAreAdmitted would stop before the children and prove nothing.
func TestEveryBaseReachesTheChildren(t *testing.T) {
	for i, job := range append(testjob.Bases(), manifests(t)...) {
		job.Namespace = namespace
		if !checkChildren(t, job, builder.Options{}) {
			t.Errorf("base %d (%s) was refused before its children were built", i, job.Name)
		}
	}
}

// admitted sends obj to the API server as a dry run, and reports whether
// it was accepted; obj is then what the server would store.
func admitted(t *testing.T, obj client.Object) bool {
	err := k8s.Create(context.Background(), obj, client.DryRunAll)
	switch {
	case err == nil:
		return true
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		return false
	}
	t.Fatalf("sending %T: %v", obj, err)
	return false
}
