package builder

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func TestWorkerPodIsTheTemplateWithTheJobsAdditions(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").Workers(3))
	tpl := workerTemplate(job)
	tpl.Labels = map[string]string{
		"app":        "pi",
		labelJobRole: "user-role", // ours must win
	}
	tpl.Annotations = map[string]string{"example.com/note": "kept"}
	tpl.Spec.NodeSelector = map[string]string{"gpu": "a100"}
	tpl.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	tpl.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "FOO", Value: "bar"}}
	tpl.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}

	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "pi-worker-2",
			Namespace: "ns",
			Labels: map[string]string{
				"app":             "pi",
				labelJobName:      "pi",
				labelOperatorName: "mpi-operator",
				labelJobRole:      "worker",
				labelReplicaType:  "worker",
				labelReplicaIndex: "2",
			},
			Annotations:     map[string]string{"example.com/note": "kept"},
			OwnerReferences: ownerRefs(job),
		},
		Spec: corev1.PodSpec{
			Hostname:                     "pi-worker-2",
			Subdomain:                    "pi",
			DNSConfig:                    &corev1.PodDNSConfig{Searches: []string{"pi.ns.svc." + testDomain}},
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			NodeSelector:                 map[string]string{"gpu": "a100"},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				sshVolume("pi", 0o600),
				knownHostsVolume("pi"),
			},
			Containers: []corev1.Container{{
				Name:    "worker",
				Image:   "mpi",
				Command: []string{"/usr/sbin/sshd", "-De"},
				Args:    []string{"-h", "/root/.ssh/id_rsa"},
				Env: []corev1.EnvVar{
					{Name: "K_MPI_JOB_ROLE", Value: "worker"},
					{Name: "FOO", Value: "bar"},
				},
				VolumeMounts: append([]corev1.VolumeMount{{Name: "data", MountPath: "/data"}}, sshdWorkerMounts("/root/.ssh")...),
			}},
		},
	}
	got := WorkerPod(job, 2, testOpts)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WorkerPod (-want +got):\n%s", diff)
	}
}

func TestWorkerPodRestartPolicy(t *testing.T) {
	cases := map[string]struct {
		policy kubeflow.RestartPolicy
		want   corev1.RestartPolicy
	}{
		"default is Never":              {policy: "", want: corev1.RestartPolicyNever},
		"Never stays Never":             {policy: kubeflow.RestartPolicyNever, want: corev1.RestartPolicyNever},
		"OnFailure stays OnFailure":     {policy: kubeflow.RestartPolicyOnFailure, want: corev1.RestartPolicyOnFailure},
		"Always stays Always":           {policy: kubeflow.RestartPolicyAlways, want: corev1.RestartPolicyAlways},
		"ExitCode is Never for kubelet": {policy: kubeflow.RestartPolicyExitCode, want: corev1.RestartPolicyNever},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := testjob.MakeMPIJob("pi", "ns")
			if tc.policy != "" {
				w.WorkerRestartPolicy(tc.policy)
			}
			got := WorkerPod(defaulted(w), 0, testOpts).Spec.RestartPolicy
			if got != tc.want {
				t.Errorf("restartPolicy = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWorkerPodServiceAccountToken(t *testing.T) {
	cases := map[string]struct {
		template *bool
		want     *bool
	}{
		"unset in the template: no token":     {template: nil, want: ptr.To(false)},
		"explicit true in the template kept":  {template: ptr.To(true), want: ptr.To(true)},
		"explicit false in the template kept": {template: ptr.To(false), want: ptr.To(false)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := defaulted(testjob.MakeMPIJob("pi", "ns"))
			workerTemplate(job).Spec.AutomountServiceAccountToken = tc.template
			got := WorkerPod(job, 0, testOpts).Spec.AutomountServiceAccountToken
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("automountServiceAccountToken (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkerPodContainers(t *testing.T) {
	cases := map[string]struct {
		containers []corev1.Container
		want       []corev1.Container
	}{
		"first container without command nor args runs sshd": {
			containers: []corev1.Container{{Name: "w", Image: "mpi"}},
			want: []corev1.Container{{
				Name: "w", Image: "mpi",
				Command:      []string{"/usr/sbin/sshd", "-De"},
				Args:         []string{"-h", "/root/.ssh/id_rsa"},
				Env:          []corev1.EnvVar{{Name: "K_MPI_JOB_ROLE", Value: "worker"}},
				VolumeMounts: sshdWorkerMounts("/root/.ssh"),
			}},
		},
		"sshd in the template gets the job's key with -h": {
			containers: []corev1.Container{{Name: "w", Image: "mpi", Command: []string{"/usr/sbin/sshd"}, Args: []string{"-De", "-f", "/home/mpiuser/.sshd_config"}}},
			want: []corev1.Container{{
				Name: "w", Image: "mpi",
				Command:      []string{"/usr/sbin/sshd"},
				Args:         []string{"-De", "-f", "/home/mpiuser/.sshd_config", "-h", "/root/.ssh/id_rsa"},
				Env:          []corev1.EnvVar{{Name: "K_MPI_JOB_ROLE", Value: "worker"}},
				VolumeMounts: sshdWorkerMounts("/root/.ssh"),
			}},
		},
		"sshd given a host key of its own keeps it; the job's is mounted over the default file": {
			containers: []corev1.Container{{Name: "w", Image: "mpi", Command: []string{"sshd", "-D", "-h", "/k"}}},
			want: []corev1.Container{{
				Name: "w", Image: "mpi",
				Command:      []string{"sshd", "-D", "-h", "/k"},
				Env:          []corev1.EnvVar{{Name: "K_MPI_JOB_ROLE", Value: "worker"}},
				VolumeMounts: workerMounts("/root/.ssh"),
			}},
		},
		"a command in the template is kept": {
			containers: []corev1.Container{{Name: "w", Image: "mpi", Command: []string{"/start.sh"}}},
			want: []corev1.Container{{
				Name: "w", Image: "mpi",
				Command:      []string{"/start.sh"},
				Env:          []corev1.EnvVar{{Name: "K_MPI_JOB_ROLE", Value: "worker"}},
				VolumeMounts: workerMounts("/root/.ssh"),
			}},
		},
		"args alone keep the image's entrypoint": {
			containers: []corev1.Container{{Name: "w", Image: "mpi", Args: []string{"--port", "2222"}}},
			want: []corev1.Container{{
				Name: "w", Image: "mpi",
				Args:         []string{"--port", "2222"},
				Env:          []corev1.EnvVar{{Name: "K_MPI_JOB_ROLE", Value: "worker"}},
				VolumeMounts: workerMounts("/root/.ssh"),
			}},
		},
		"the user's K_MPI_JOB_ROLE comes after ours, so it wins": {
			containers: []corev1.Container{{Name: "w", Image: "mpi", Command: []string{"x"}, Env: []corev1.EnvVar{
				{Name: "A", Value: "1"},
				{Name: "K_MPI_JOB_ROLE", Value: "custom"},
			}}},
			want: []corev1.Container{{
				Name: "w", Image: "mpi",
				Command: []string{"x"},
				Env: []corev1.EnvVar{
					{Name: "K_MPI_JOB_ROLE", Value: "worker"},
					{Name: "A", Value: "1"},
					{Name: "K_MPI_JOB_ROLE", Value: "custom"},
				},
				VolumeMounts: workerMounts("/root/.ssh"),
			}},
		},
		"every container gets the role; only the first gets the keys and sshd": {
			containers: []corev1.Container{
				{Name: "w", Image: "mpi"},
				{Name: "sidecar", Image: "busybox", Env: []corev1.EnvVar{{Name: "S", Value: "1"}}},
			},
			want: []corev1.Container{
				{
					Name: "w", Image: "mpi",
					Command:      []string{"/usr/sbin/sshd", "-De"},
					Args:         []string{"-h", "/root/.ssh/id_rsa"},
					Env:          []corev1.EnvVar{{Name: "K_MPI_JOB_ROLE", Value: "worker"}},
					VolumeMounts: sshdWorkerMounts("/root/.ssh"),
				},
				{
					Name: "sidecar", Image: "busybox",
					Env: []corev1.EnvVar{
						{Name: "K_MPI_JOB_ROLE", Value: "worker"},
						{Name: "S", Value: "1"},
					},
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := defaulted(testjob.MakeMPIJob("pi", "ns"))
			workerTemplate(job).Spec.Containers = tc.containers
			got := WorkerPod(job, 0, testOpts).Spec.Containers
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkerPodNamesAndLabelsFollowTheIndex(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("train", "team-a").Workers(12))
	for i, want := range map[int]string{0: "0", 1: "1", 11: "11"} {
		pod := WorkerPod(job, i, testOpts)
		name := "train-worker-" + want
		if pod.Name != name || pod.Spec.Hostname != name {
			t.Errorf("worker %d: name %q hostname %q, want %q", i, pod.Name, pod.Spec.Hostname, name)
		}
		if pod.Namespace != "team-a" || pod.Spec.Subdomain != "train" {
			t.Errorf("worker %d: namespace %q subdomain %q, want team-a and train", i, pod.Namespace, pod.Spec.Subdomain)
		}
		labels := roleLabels("train", "worker")
		labels[labelReplicaIndex] = want
		if diff := cmp.Diff(labels, pod.Labels); diff != "" {
			t.Errorf("worker %d labels (-want +got):\n%s", i, diff)
		}
	}
}

func TestHostNetworkPodsResolveTheJobsNames(t *testing.T) {
	cases := map[string]struct {
		hostNetwork bool
		policy      corev1.DNSPolicy
		want        corev1.DNSPolicy
	}{
		"host network gets the cluster's resolver":   {hostNetwork: true, want: corev1.DNSClusterFirstWithHostNet},
		"the template's own policy is kept":          {hostNetwork: true, policy: corev1.DNSDefault, want: corev1.DNSDefault},
		"Pod network keeps the API server's default": {hostNetwork: false, want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := testjob.MakeMPIJob("pi", "ns").Workers(1)
			for _, role := range []kubeflow.MPIReplicaType{kubeflow.MPIReplicaTypeLauncher, kubeflow.MPIReplicaTypeWorker} {
				spec := &w.Obj().Spec.MPIReplicaSpecs[role].Template.Spec
				spec.HostNetwork, spec.DNSPolicy = tc.hostNetwork, tc.policy
			}
			job := defaulted(w)
			if got := WorkerPod(job, 0, testOpts).Spec.DNSPolicy; got != tc.want {
				t.Errorf("worker dnsPolicy = %q, want %q", got, tc.want)
			}
			if got := LauncherJob(job, false, testOpts).Spec.Template.Spec.DNSPolicy; got != tc.want {
				t.Errorf("launcher dnsPolicy = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReplicaIndexFollowsRanksWhenTheLauncherRunsOne(t *testing.T) {
	cases := map[string]struct {
		job          *testjob.Wrapper
		wantLauncher string // "" means no label
		wantWorkers  []string
	}{
		"workers are 0..n-1 and the launcher has no index": {
			job:         testjob.MakeMPIJob("pi", "ns").Workers(2),
			wantWorkers: []string{"0", "1"},
		},
		"with runLauncherAsWorker the launcher is 0 and workers 1..n": {
			job:          testjob.MakeMPIJob("pi", "ns").Workers(2).LauncherAsWorker(),
			wantLauncher: "0",
			wantWorkers:  []string{"1", "2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := defaulted(tc.job)
			launcher := LauncherJob(job, false, testOpts)
			if got := launcher.Spec.Template.Labels[labelReplicaIndex]; got != tc.wantLauncher {
				t.Errorf("launcher Pod index = %q, want %q", got, tc.wantLauncher)
			}
			if _, ok := launcher.Labels[labelReplicaIndex]; ok {
				t.Errorf("launcher Job itself carries an index label: %v", launcher.Labels)
			}
			for i, want := range tc.wantWorkers {
				pod := WorkerPod(job, i, testOpts)
				if got := pod.Labels[labelReplicaIndex]; got != want {
					t.Errorf("worker %d index = %q, want %q", i, got, want)
				}
				if idx, ok := WorkerIndex(job, pod.Name); !ok || idx != i {
					t.Errorf("WorkerIndex(%q) = %d, %t; want %d", pod.Name, idx, ok, i)
				}
			}
		})
	}
}

func TestWorkerIndexRefusesNamesItDidNotGive(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").Workers(2))
	for _, name := range []string{"pi-worker-", "pi-worker-01", "pi-worker--1", "pi-worker-a", "pi-launcher", "other-worker-0", "pi-worker-1x"} {
		if i, ok := WorkerIndex(job, name); ok {
			t.Errorf("WorkerIndex(%q) = %d, true; want false", name, i)
		}
	}
}

func TestSearchEntryUsesTheClusterDomainTheOperatorKnows(t *testing.T) {
	cases := map[string]struct {
		opts Options
		want string
	}{
		"the flag wins":                   {opts: Options{ClusterDomain: "a.example", SearchDomain: "b.example"}, want: "pi.ns.svc.a.example"},
		"else the domain read at startup": {opts: Options{SearchDomain: "b.example"}, want: "pi.ns.svc.b.example"},
		"else Kubernetes' default domain": {opts: Options{}, want: "pi.ns.svc.cluster.local"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := defaulted(testjob.MakeMPIJob("pi", "ns").Workers(1))
			for _, spec := range []corev1.PodSpec{WorkerPod(job, 0, tc.opts).Spec, LauncherJob(job, false, tc.opts).Spec.Template.Spec} {
				if diff := cmp.Diff([]string{tc.want}, spec.DNSConfig.Searches); diff != "" {
					t.Errorf("search list (-want +got):\n%s", diff)
				}
			}
		})
	}
}
