package builder

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func TestSSHSecret(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns"))
	priv := []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n...\n")
	pub := []byte("ssh-ed25519 AAAA pi\n")
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "pi-ssh",
			Namespace:       "ns",
			Labels:          jobLabels("pi"),
			OwnerReferences: ownerRefs(job),
		},
		Type:      "kubernetes.io/ssh-auth",
		Immutable: ptr.To(true),
		Data: map[string][]byte{
			"ssh-privatekey": priv,
			"ssh-publickey":  pub,
		},
	}
	got := SSHSecret(job, priv, pub)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SSHSecret (-want +got):\n%s", diff)
	}
}

func TestServiceIsHeadlessAndSelectsNoPod(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").Workers(2))
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "pi",
			Namespace:       "ns",
			Labels:          jobLabels("pi"),
			OwnerReferences: ownerRefs(job),
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                "None",
			PublishNotReadyAddresses: true,
		},
	}
	if diff := cmp.Diff(want, Service(job)); diff != "" {
		t.Errorf("Service (-want +got):\n%s", diff)
	}
}

func TestWorkerSelectorMatchesWorkersOnly(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").Workers(2))
	sel := WorkerSelector(job)
	// Upstream's selector: it also matches the workers upstream's
	// operator made, which lack replica-type.
	if want := "training.kubeflow.org/job-name=pi,training.kubeflow.org/job-role=worker," +
		"training.kubeflow.org/operator-name=mpi-operator"; sel.String() != want {
		t.Errorf("WorkerSelector = %q, want %q", sel.String(), want)
	}
	if l := WorkerPod(job, 1, testOpts).Labels; !sel.Matches(labels.Set(l)) {
		t.Errorf("WorkerSelector does not match worker labels %v", l)
	}
	if l := LauncherJob(job, false, testOpts).Spec.Template.Labels; sel.Matches(labels.Set(l)) {
		t.Errorf("WorkerSelector matches the launcher's labels %v", l)
	}
	other := defaulted(testjob.MakeMPIJob("other", "ns"))
	if l := WorkerPod(other, 0, testOpts).Labels; sel.Matches(labels.Set(l)) {
		t.Errorf("WorkerSelector matches another job's worker %v", l)
	}
}

func TestChildNames(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns"))
	got := map[string]string{
		"secret":    SSHSecretName(job),
		"configmap": ConfigMapName(job),
		"service":   ServiceName(job),
		"launcher":  LauncherName(job),
		"worker 0":  WorkerName(job, 0),
		"worker 10": WorkerName(job, 10),
		"fqdn":      HostName(job, "pi-worker-3", Options{ClusterDomain: "cluster.local"}),
		"short":     HostName(job, "pi-worker-3", Options{SearchDomain: "corp.example"}),
	}
	want := map[string]string{
		"secret":    "pi-ssh",
		"configmap": "pi-config",
		"service":   "pi",
		"launcher":  "pi-launcher",
		"worker 0":  "pi-worker-0",
		"worker 10": "pi-worker-10",
		"fqdn":      "pi-worker-3.pi.ns.svc.cluster.local",
		"short":     "pi-worker-3.pi",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

// richJob is a job whose templates have every map, slice and pointer a
// builder might write through: labels, annotations, env, mounts, security
// contexts, a non-root key path and a pod failure policy.
func richJob() *kubeflow.MPIJob {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").Workers(3).Slots(2).BackoffLimit(4).
		SSHAuthMountPath("/home/mpiuser/.ssh").
		LauncherRestartPolicy(kubeflow.RestartPolicyExitCode).
		WorkerRestartPolicy(kubeflow.RestartPolicyExitCode))
	for _, tpl := range []*corev1.PodTemplateSpec{workerTemplate(job), launcherTemplate(job)} {
		tpl.Labels = map[string]string{"app": "pi", labelJobRole: "user"}
		tpl.Annotations = map[string]string{"example.com/note": "kept"}
		tpl.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}
		tpl.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		c := &tpl.Spec.Containers[0]
		c.Env = []corev1.EnvVar{{Name: "FOO", Value: "bar"}}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		c.SecurityContext = &corev1.SecurityContext{RunAsGroup: ptr.To[int64](2000)}
	}
	// A worker without command gets sshd: that must not reach the template.
	workerTemplate(job).Spec.Containers[0].Command = nil
	return job
}

func TestBuildersDoNotMutateTheJob(t *testing.T) {
	builders := map[string]func(*kubeflow.MPIJob){
		"SSHSecret":     func(j *kubeflow.MPIJob) { SSHSecret(j, []byte("priv"), []byte("pub")) },
		"ConfigMap":     func(j *kubeflow.MPIJob) { ConfigMap(j, []int{0, 2}, nil, testOpts) },
		"Hostfile":      func(j *kubeflow.MPIJob) { Hostfile(j, testOpts) },
		"DiscoverHosts": func(j *kubeflow.MPIJob) { DiscoverHosts(j, []int{1}, testOpts) },
		"Service":       func(j *kubeflow.MPIJob) { Service(j) },
		"WorkerPod":     func(j *kubeflow.MPIJob) { WorkerPod(j, 1, testOpts) },
		"LauncherJob":   func(j *kubeflow.MPIJob) { LauncherJob(j, true, testOpts) },
	}
	for name, build := range builders {
		t.Run(name, func(t *testing.T) {
			job := richJob()
			before := job.DeepCopy()
			build(job)
			build(job) // a second call must see the same input
			if diff := cmp.Diff(before, job); diff != "" {
				t.Errorf("%s mutated the job (-before +after):\n%s", name, diff)
			}
		})
	}
}

func TestBuildersReturnTheSameObjectOnEveryCall(t *testing.T) {
	job := richJob()
	if diff := cmp.Diff(WorkerPod(job, 1, testOpts), WorkerPod(job, 1, testOpts)); diff != "" {
		t.Errorf("WorkerPod differs between calls:\n%s", diff)
	}
	if diff := cmp.Diff(LauncherJob(job, false, testOpts), LauncherJob(job, false, testOpts)); diff != "" {
		t.Errorf("LauncherJob differs between calls:\n%s", diff)
	}
	// The templates' own env and mounts come once, not once per call.
	if n := len(WorkerPod(job, 1, testOpts).Spec.Containers[0].Env); n != 2 {
		t.Errorf("worker has %d env vars, want 2 (role and FOO)", n)
	}
}

// TestBuiltObjectsShareNoMemoryWithTheJob writes through every map, slice
// and pointer of the built objects: the controller (or a client decoding a
// response into them) may change them, and that must never reach the job.
func TestBuiltObjectsShareNoMemoryWithTheJob(t *testing.T) {
	t.Run("WorkerPod", func(t *testing.T) {
		job := richJob()
		before := job.DeepCopy()
		pod := WorkerPod(job, 0, testOpts)
		pod.Labels["app"] = "changed"
		pod.Annotations["example.com/note"] = "changed"
		pod.Spec.Volumes[0].Name = "changed"
		*pod.Spec.SecurityContext.RunAsUser = 1
		*pod.Spec.SecurityContext.FSGroup = 1
		c := &pod.Spec.Containers[0]
		c.Env[1].Value = "changed"
		c.VolumeMounts[0].MountPath = "/changed"
		*c.SecurityContext.RunAsGroup = 1
		if diff := cmp.Diff(before, job); diff != "" {
			t.Errorf("changing the Pod changed the job (-before +after):\n%s", diff)
		}
	})
	t.Run("LauncherJob template", func(t *testing.T) {
		job := richJob()
		before := job.DeepCopy()
		l := LauncherJob(job, false, testOpts)
		tpl := &l.Spec.Template
		tpl.Labels["app"] = "changed"
		tpl.Annotations["example.com/note"] = "changed"
		l.Labels[labelJobName] = "changed"
		*tpl.Spec.SecurityContext.RunAsUser = 1
		c := &tpl.Spec.Containers[0]
		c.Env[len(c.Env)-1].Value = "changed"
		c.VolumeMounts[0].MountPath = "/changed"
		c.Command[0] = "changed"
		if diff := cmp.Diff(before, job); diff != "" {
			t.Errorf("changing the launcher Job changed the MPIJob (-before +after):\n%s", diff)
		}
	})
	t.Run("LauncherJob backoffLimit", func(t *testing.T) {
		job := richJob()
		l := LauncherJob(job, false, testOpts)
		*l.Spec.BackoffLimit = 99
		if got := *job.Spec.RunPolicy.BackoffLimit; got != 4 {
			t.Errorf("MPIJob backoffLimit = %d after changing the launcher Job's, want 4", got)
		}
	})
	t.Run("EndpointSlices", func(t *testing.T) {
		job := richJob()
		pod := addressedPod("pi-worker-0", "10.0.0.1")
		sl := EndpointSlices(job, []*corev1.Pod{pod}, MaxEndpointsPerSlice)[0]
		*sl.Endpoints[0].Hostname = "changed"
		sl.Labels["extra"] = "x"
		if pod.Spec.Hostname != "pi-worker-0" || Service(job).Labels["extra"] != "" {
			t.Error("a slice shares memory with the Pod it publishes or with the job's labels")
		}
	})
}

func TestLauncherJobNameNeverReusesAName(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Obj()
	if got := LauncherJobName(job, 0); got != "pi-launcher" {
		t.Errorf("first attempt: %q, want upstream's pi-launcher", got)
	}
	if got := LauncherJobName(job, 2); got != "pi-launcher-2" {
		t.Errorf("after two restarts: %q", got)
	}
	// The longest names admission allows (54 characters), cut alike to
	// fit a label, still differ by the job's UID (every object has its
	// own), and never end a label on '-' or '.'.
	seen := map[string]bool{}
	uids := []types.UID{"1a4d37b1-edb1", "57b73c87-85ce", "0b7aa9b4-3349", "a04f5de9-1181", "6722e57f-6e49", "b919ff5e-7f9f"}
	for i, name := range []string{strings.Repeat("a", 54), strings.Repeat("a", 48) + ".b.c.d", strings.Repeat("a", 47) + "-bbbbbb"} {
		for _, uid := range uids[2*i : 2*i+2] {
			long := testjob.MakeMPIJob(name, "ns").Obj()
			long.UID = uid
			for _, restarts := range []int32{1, 12, 1000} {
				got := LauncherJobName(long, restarts)
				if len(got) > 63 || seen[got] || strings.Contains(got, ".-") || strings.Contains(got, "--") {
					t.Errorf("%s (%s), %d restarts: %q", name, uid, restarts, got)
				}
				seen[got] = true
			}
		}
	}
}
