//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// cachingNamespace is the namespace whose names the local cluster's
// CoreDNS caches as kubeadm's Corefile did before Kubernetes 1.32
// (`cache 30` over the kubernetes plugin's `ttl 30`): an NXDOMAIN is kept
// for 30 s (hack/cluster/steps.sh, dns_up).
const cachingNamespace = "dns-cache"

// TestLauncherAsksDNSOnlyOnceTheWorkersArePublished: under a DNS that
// caches denials, a launcher that asked for a worker's name while the
// worker started would keep getting NXDOMAIN for 30 s after the name was
// published. The workers here start 3 s after the launcher (an init
// container waits), so the launcher's wait must hold its questions until
// the operator says every worker is published; then each name resolves
// at the first question, and the ranks run on both workers. (With the
// operator of the commit before, the job took 34 s, the launcher reporting
// "waiting for mpi-worker-0.mpi to resolve".)
func TestLauncherAsksDNSOnlyOnceTheWorkersArePublished(t *testing.T) {
	ns := fixedNamespace(t, cachingNamespace)
	// A name of its own: the cache keeps an address for 30 s too, and a
	// job of the same name run just before had other addresses.
	name := fmt.Sprintf("mpi-%s-%d", runID, nsCounter.Add(1))
	job := mpiJobIn(ns, name, openMPI4, false, 2, "mpirun", "-n", "2", "/opt/mpi/ranks")
	// The cluster's DNS caches denials in this namespace only, which the
	// operator cannot find out from its own: the job says so.
	job.Annotations = map[string]string{builder.AnnotationDNSCachesDenials: "true"}
	w := &job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Template.Spec
	w.InitContainers = []corev1.Container{{Name: "late", Image: w.Containers[0].Image, ImagePullPolicy: corev1.PullNever,
		Command: []string{"sleep", "3"}}}
	create(t, job)
	expectRanksOn(t, job, workerNames(job, 2)...)
	got := &kubeflow.MPIJob{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), got); err == nil {
		t.Logf("created %s, Succeeded %s (whole seconds)", got.CreationTimestamp.Format(time.TimeOnly),
			condition(got, kubeflow.JobSucceeded).LastTransitionTime.Format(time.TimeOnly))
	}
	out := launcherLogs(t, job)
	if !strings.Contains(out, "waiting for the operator to publish the workers' names") {
		t.Errorf("the launcher did not wait for the operator's word, so the case proves nothing:\n%s", out)
	}
	if strings.Contains(out, "to resolve") {
		t.Errorf("the launcher asked for a name before it was published:\n%s", out)
	}
}

// fixedNamespace makes the namespace name, once any of an earlier run is
// gone, and deletes it after a test that passed.
func fixedNamespace(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	err := wait.PollUntilContextTimeout(ctx, time.Second, jobTimeout, true, func(ctx context.Context) (bool, error) {
		err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		if apierrors.IsAlreadyExists(err) {
			old := &corev1.Namespace{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(ns), old); err == nil && old.DeletionTimestamp == nil {
				_ = k8s.Delete(ctx, old)
			}
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("making namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = k8s.Delete(context.Background(), ns)
		}
	})
	return name
}
