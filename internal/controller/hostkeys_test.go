package controller

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// launcherSSHArgs is the value of OMPI_MCA_plm_rsh_args in the job's
// launcher Job.
func launcherSSHArgs(t *testing.T, f *fixture) string {
	t.Helper()
	l := &batchv1.Job{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-launcher"}, l); err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "OMPI_MCA_plm_rsh_args" {
			return e.Value
		}
	}
	t.Fatalf("no OMPI_MCA_plm_rsh_args in the launcher: %+v", l.Spec.Template.Spec.Containers[0].Env)
	return ""
}

func knownHosts(t *testing.T, f *fixture) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-config"}, cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data["known_hosts"]
}

func secretPublicKey(t *testing.T, f *fixture) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-ssh"}, s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data["ssh-publickey"])
}

func TestLauncherChecksTheHostKeyTheConfigMapPins(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	if got := launcherSSHArgs(t, f); got != "-F /etc/mpi/ssh_config" {
		t.Errorf("launcher ssh options %q, want the job's ssh_config", got)
	}
	cm := &corev1.ConfigMap{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-config"}, cm); err != nil {
		t.Fatal(err)
	}
	if c := cm.Data["ssh_config"]; !strings.Contains(c, "\nStrictHostKeyChecking yes\nUserKnownHostsFile /etc/mpi/known_hosts\n") {
		t.Errorf("ssh_config %q does not check host keys against known_hosts", c)
	}
	if kh, key := knownHosts(t, f), secretPublicKey(t, f); key == "" || !strings.HasSuffix(kh, " "+key) {
		t.Errorf("known_hosts %q does not pin the Secret's key %q", kh, key)
	}
}

// TestPinnedKeyIsTheLiveSecretsWhenTheCacheMissedIt: a cache that has not
// seen the Secret yet makes the controller generate a key whose create
// answers AlreadyExists; the key pinned must be the Secret's, not that one.
func TestPinnedKeyIsTheLiveSecretsWhenTheCacheMissedIt(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	f.r.Expectations.CreationObserved("ns/pi", "pi-worker-0")
	key := secretPublicKey(t, f)
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = "ns", "pi-config"
	if err := f.client.Delete(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	f.r.Client = interceptor.NewClient(f.client.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	f.reconcile(t, job)
	if kh := knownHosts(t, f); !strings.HasSuffix(kh, " "+key) {
		t.Errorf("known_hosts %q does not pin the live Secret's key %q", kh, key)
	}
}

// TestLauncherKeepsOlderOptionsForWorkersOfAnOlderOperator: a worker made
// before host keys were checked may present its image's own key; the job
// keeps working as it did, unchecked, until that worker is gone.
func TestLauncherKeepsOlderOptionsForWorkersOfAnOlderOperator(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	live := &kubeflow.MPIJob{}
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(job), live); err != nil {
		t.Fatal(err)
	}
	kubeflow.SetDefaults(live)
	older := builder.WorkerPod(live, 1, f.r.Options)
	c := &older.Spec.Containers[0]
	c.VolumeMounts = c.VolumeMounts[:1] // the keys at sshAuthMountPath only
	c.Args = nil                        // and sshd not given the job's key
	if builder.PresentsJobHostKey(older) {
		t.Fatal("the older worker presents the job's key")
	}
	if err := f.client.Create(context.Background(), older); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, job)
	if got := launcherSSHArgs(t, f); !strings.Contains(got, "StrictHostKeyChecking=no") {
		t.Errorf("launcher ssh options %q check the host key of a worker an older operator made", got)
	}
}
