package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// upstreamPublicKey is an ECDSA P-521 public key as upstream's operator
// writes it in the Secret.
const upstreamPublicKey = "ecdsa-sha2-nistp521 AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjEAAACFBADuIMi1KS4pZWpj9k/cxPpUXDhoqFKV2CSZtRIaUMw2RPZIvBIav6r5l03rgi9QGYFALLA6L3GLQYWYrf8hdzJQZADEPOURQomyrjdvKkY4Q1x6IeZGoUZDUrVr2oiLBzWCuYfpZ4TaGHHXtmPzUR2D2f4/IU6mXqkfJ0/UWGVtJMbPZw==\n"

// upstreamChildren are the children kubeflow/mpi-operator v0.8 makes for
// a job, shaped as it shapes them: Secret, Service, ConfigMap and launcher
// Job labelled only "app: <job>", workers without replica-type, the
// hostfile in its own format.
func upstreamChildren(job *kubeflow.MPIJob) []client.Object {
	ns, name := job.Namespace, job.Name
	meta := func(n string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: n, Namespace: ns, Labels: map[string]string{"app": name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, kubeflow.GroupVersion.WithKind(kubeflow.Kind))},
		}
	}
	podLabels := func(role string) map[string]string {
		return map[string]string{
			kubeflow.LabelOperatorName: kubeflow.OperatorName,
			kubeflow.LabelJobName:      name,
			kubeflow.LabelJobRole:      role,
		}
	}
	container := corev1.Container{Name: "mpi", Image: "mpioperator/mpi-pi:openmpi"}
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: meta(name + "-ssh"), Type: corev1.SecretTypeSSHAuth, Data: map[string][]byte{
			corev1.SSHAuthPrivateKey: []byte("upstream's ECDSA key"), "ssh-publickey": []byte(upstreamPublicKey),
		}},
		&corev1.Service{ObjectMeta: meta(name), Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{kubeflow.LabelOperatorName: kubeflow.OperatorName, kubeflow.LabelJobName: name},
		}},
		&corev1.ConfigMap{ObjectMeta: meta(name + "-config"), Data: map[string]string{
			"hostfile": fmt.Sprintf("%s-worker-0.%s.%s.svc slots=1\n%s-worker-1.%s.%s.svc slots=1\n", name, name, ns, name, name, ns),
		}},
		&batchv1.Job{ObjectMeta: meta(name + "-launcher"), Spec: batchv1.JobSpec{
			BackoffLimit:         ptr.To[int32](6),
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels("launcher")},
				Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure, Containers: []corev1.Container{container}},
			},
		}},
	}
	for i := range 2 {
		pod := &corev1.Pod{ObjectMeta: meta(fmt.Sprintf("%s-worker-%d", name, i)), Spec: corev1.PodSpec{
			Hostname: fmt.Sprintf("%s-worker-%d", name, i), Subdomain: name, Containers: []corev1.Container{container},
		}}
		pod.Labels = podLabels("worker")
		pod.Labels[kubeflow.LabelReplicaIndex] = fmt.Sprint(i)
		objs = append(objs, pod)
	}
	return objs
}

// TestAdoptsTheChildrenUpstreamsOperatorMade is an operator swap mid-job:
// upstream's operator made every child, then this one starts. It must
// take them over (none replaced, none duplicated) and carry the job on.
// operatorNotStarted is the creation the controller waits for until the
// test has made upstream's children: until then it acts as if it were not
// running yet.
const operatorNotStarted = "operator-not-started"

// jobUpstreamMade is a job of two workers, pi in a new namespace, whose
// children upstream's operator made (upstreamChildren), while this
// controller waits (operatorNotStarted: report it to start it). It
// returns the job and the children made.
func jobUpstreamMade(t *testing.T) (*kubeflow.MPIJob, []client.Object) {
	t.Helper()
	ns := newNamespace(t)
	r.Expectations.ExpectCreations(ns+"/pi", operatorNotStarted)
	job := createJob(t, testjob.MakeMPIJob("pi", ns).Workers(2).Obj())
	objs := upstreamChildren(job)
	for _, obj := range objs {
		if err := k8s.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating upstream's %T %s: %v", obj, obj.GetName(), err)
		}
	}
	return job, objs
}

func TestAdoptsTheChildrenUpstreamsOperatorMade(t *testing.T) {
	job, objs := jobUpstreamMade(t)
	ns, key := job.Namespace, job.Namespace+"/pi"
	uids := map[string]types.UID{}
	for _, obj := range objs {
		uids[fmt.Sprintf("%T/%s", obj, obj.GetName())] = obj.GetUID()
	}
	r.Expectations.CreationObserved(key, operatorNotStarted)

	runWorkers(t, job, 2)
	startLauncher(t, job)
	waitCondition(t, job, kubeflow.JobRunning, corev1.ConditionTrue)

	eventually(t, "every child adopted, none replaced", func(ctx context.Context) (bool, error) {
		for _, obj := range upstreamChildren(job) {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return false, err
			}
			id := fmt.Sprintf("%T/%s", obj, obj.GetName())
			if obj.GetUID() != uids[id] {
				return false, fmt.Errorf("%s was replaced", id)
			}
			if l := obj.GetLabels(); l[kubeflow.LabelOperatorName] != kubeflow.OperatorName || l[kubeflow.LabelJobName] != "pi" {
				return false, fmt.Errorf("%s not adopted: labels %v", id, l)
			}
		}
		return true, nil
	})
	if pods, err := workerPods(context.Background(), job); err != nil || len(pods) != 2 {
		t.Errorf("worker Pods: %d, %v; want upstream's 2", len(pods), err)
	}
	cm := &corev1.ConfigMap{}
	eventually(t, "hostfile rewritten in this operator's format", func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pi-config"}, cm)
		want := fmt.Sprintf("pi-worker-0.pi.%s.svc.%s slots=1\npi-worker-1.pi.%s.svc.%s slots=1\n", ns, clusterDomain, ns, clusterDomain)
		return err == nil && cm.Data["hostfile"] == want, fmt.Errorf("hostfile %q: %w", cm.Data["hostfile"], err)
	})
	// The Secret upstream's operator made keeps serving: its key is the
	// one pinned, so new workers (which present it as host key) are checked.
	if kh := cm.Data["known_hosts"]; !strings.HasSuffix(kh, "]:* "+upstreamPublicKey) {
		t.Errorf("known_hosts %q does not pin the key of upstream's Secret", kh)
	}

	finishLauncher(t, job, true, "", "")
	waitCondition(t, job, kubeflow.JobSucceeded, corev1.ConditionTrue)
}

// TestAdoptsUpstreamsLauncherJobWhosePodRuns is the same swap while
// upstream's launcher runs: its Job already has a Pod, which carries the
// labels our cache selects by while the Job does not. The Job is adopted,
// so that its completion, which touches no Pod of ours, ends the job.
// Before, it was read past the cache on every reconcile and never
// labelled, and the job stayed Running after its launcher completed.
func TestAdoptsUpstreamsLauncherJobWhosePodRuns(t *testing.T) {
	ctx := context.Background()
	job, objs := jobUpstreamMade(t)
	ns, key := job.Namespace, job.Namespace+"/pi"
	var launcher *batchv1.Job
	for _, obj := range objs {
		if l, ok := obj.(*batchv1.Job); ok {
			launcher = l
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "pi-launcher-x7k2p", Namespace: ns, Labels: launcher.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(launcher, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: launcher.Spec.Template.Spec,
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatalf("creating the launcher's Pod: %v", err)
	}
	// This operator starts: the Pod updates below bring its reconciles.
	r.Expectations.CreationObserved(key, operatorNotStarted)
	setPodPhase(t, pod, corev1.PodRunning, true)
	startLauncher(t, job)
	for _, w := range []string{"pi-worker-0", "pi-worker-1"} {
		setPodPhase(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w}}, corev1.PodRunning, true)
	}

	waitCondition(t, job, kubeflow.JobRunning, corev1.ConditionTrue)
	eventually(t, "upstream's launcher Job adopted", func(ctx context.Context) (bool, error) {
		l := &batchv1.Job{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(launcher), l); err != nil {
			return false, err
		}
		if l.UID != launcher.UID {
			return false, fmt.Errorf("launcher Job replaced")
		}
		return l.Labels[kubeflow.LabelOperatorName] == kubeflow.OperatorName, fmt.Errorf("labels %v", l.Labels)
	})
	finishLauncher(t, job, true, "", "")
	waitCondition(t, job, kubeflow.JobSucceeded, corev1.ConditionTrue)
}
