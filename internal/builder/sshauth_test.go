package builder

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// keyModeCases are the templates and mount paths whose key file mode and
// fsGroup the builders decide.
var keyModeCases = map[string]struct {
	mountPath string // empty: the default
	podSC     *corev1.PodSecurityContext
	ctrSC     *corev1.SecurityContext

	wantMode  int32
	wantPodSC *corev1.PodSecurityContext
}{
	"default /root/.ssh: 0600, no security context added": {
		wantMode:  0o600,
		wantPodSC: nil,
	},
	"/root/.ssh with a user id in the template: 0600 and no fsGroup": {
		mountPath: "/root/.ssh",
		podSC:     &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000)},
		wantMode:  0o600,
		wantPodSC: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000)},
	},
	"a directory under /root is root's: 0600": {
		mountPath: "/root/keys",
		podSC:     &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
		wantMode:  0o600,
		wantPodSC: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
	},
	"a path merely starting with /root is not root's: 0440": {
		mountPath: "/rootless/.ssh",
		podSC:     &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
		wantMode:  0o440,
		wantPodSC: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](1000)},
	},
	"non-root home: the template's fsGroup is kept": {
		mountPath: "/home/mpiuser/.ssh",
		podSC: &corev1.PodSecurityContext{
			FSGroup: ptr.To[int64](2000), RunAsGroup: ptr.To[int64](3000), RunAsUser: ptr.To[int64](1000),
		},
		wantMode: 0o440,
		wantPodSC: &corev1.PodSecurityContext{
			FSGroup: ptr.To[int64](2000), RunAsGroup: ptr.To[int64](3000), RunAsUser: ptr.To[int64](1000),
		},
	},
	"non-root home: fsGroup from the pod's runAsGroup before runAsUser": {
		mountPath: "/home/mpiuser/.ssh",
		podSC:     &corev1.PodSecurityContext{RunAsGroup: ptr.To[int64](3000), RunAsUser: ptr.To[int64](1000)},
		wantMode:  0o440,
		wantPodSC: &corev1.PodSecurityContext{
			RunAsGroup: ptr.To[int64](3000), RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](3000),
		},
	},
	"non-root home: fsGroup from a container's runAsGroup before the pod's runAsUser": {
		mountPath: "/home/mpiuser/.ssh",
		podSC:     &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
		ctrSC:     &corev1.SecurityContext{RunAsGroup: ptr.To[int64](4000)},
		wantMode:  0o440,
		wantPodSC: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](4000)},
	},
	"non-root home: fsGroup from the pod's runAsUser when no group is known": {
		mountPath: "/home/mpiuser/.ssh",
		podSC:     &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
		wantMode:  0o440,
		wantPodSC: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](1000)},
	},
	"non-root home: fsGroup from a container's runAsUser, pod security context created": {
		mountPath: "/home/mpiuser/.ssh",
		ctrSC:     &corev1.SecurityContext{RunAsUser: ptr.To[int64](1001)},
		wantMode:  0o440,
		wantPodSC: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](1001)},
	},
	"non-root home without any id: 0440 and no fsGroup": {
		mountPath: "/home/mpiuser/.ssh",
		wantMode:  0o440,
		wantPodSC: nil,
	},
	"non-root home with an empty pod security context: left empty": {
		mountPath: "/home/mpiuser/.ssh",
		podSC:     &corev1.PodSecurityContext{},
		ctrSC:     &corev1.SecurityContext{Privileged: ptr.To(false)},
		wantMode:  0o440,
		wantPodSC: &corev1.PodSecurityContext{},
	},
}

// keyModeJob is a job with the given mount path (empty: the default) and
// security contexts in both templates.
func keyModeJob(mountPath string, podSC *corev1.PodSecurityContext, ctrSC *corev1.SecurityContext) *kubeflow.MPIJob {
	w := testjob.MakeMPIJob("pi", "ns")
	if mountPath != "" {
		w.SSHAuthMountPath(mountPath)
	}
	job := defaulted(w)
	for _, tpl := range []*corev1.PodTemplateSpec{workerTemplate(job), launcherTemplate(job)} {
		tpl.Spec.SecurityContext = podSC.DeepCopy()
		tpl.Spec.Containers[0].SecurityContext = ctrSC.DeepCopy()
	}
	return job
}

// builtSpecs returns the Pod specs of worker 0 and of the launcher.
func builtSpecs(job *kubeflow.MPIJob) map[string]*corev1.PodSpec {
	return map[string]*corev1.PodSpec{
		"worker":   &WorkerPod(job, 0, testOpts).Spec,
		"launcher": &LauncherJob(job, false, testOpts).Spec.Template.Spec,
	}
}

func TestKeyFileModesAndFSGroup(t *testing.T) {
	for name, tc := range keyModeCases {
		t.Run(name, func(t *testing.T) {
			job := keyModeJob(tc.mountPath, tc.podSC, tc.ctrSC)
			for role, spec := range builtSpecs(job) {
				v := findVolume(spec, "ssh-auth")
				if v == nil || v.Secret == nil {
					t.Fatalf("%s: no ssh-auth secret volume in %+v", role, spec.Volumes)
				}
				if diff := cmp.Diff(sshVolume("pi", tc.wantMode), *v); diff != "" {
					t.Errorf("%s ssh volume (-want +got):\n%s", role, diff)
				}
				if diff := cmp.Diff(tc.wantPodSC, spec.SecurityContext); diff != "" {
					t.Errorf("%s pod securityContext (-want +got):\n%s", role, diff)
				}
				if diff := cmp.Diff(tc.ctrSC, spec.Containers[0].SecurityContext); diff != "" {
					t.Errorf("%s container securityContext changed (-want +got):\n%s", role, diff)
				}
			}
		})
	}
}

func TestKeyFilesAreNeverWorldReadable(t *testing.T) {
	for name, tc := range keyModeCases {
		job := keyModeJob(tc.mountPath, tc.podSC, tc.ctrSC)
		for role, spec := range builtSpecs(job) {
			v := findVolume(spec, "ssh-auth")
			if v == nil || v.Secret == nil || v.Secret.DefaultMode == nil {
				t.Errorf("%s/%s: ssh-auth volume has no defaultMode: %+v", name, role, v)
				continue
			}
			if m := *v.Secret.DefaultMode; m&0o004 != 0 {
				t.Errorf("%s/%s: defaultMode %#o is world-readable", name, role, m)
			}
			for _, item := range v.Secret.Items {
				if item.Mode != nil && *item.Mode&0o004 != 0 {
					t.Errorf("%s/%s: %s mode %#o is world-readable", name, role, item.Path, *item.Mode)
				}
			}
		}
	}
}

// TestKeysAreMountedOnlyInTheFirstContainer: the first container runs
// mpirun or sshd and needs the private key; sidecars and init containers
// never get it.
func TestKeysAreMountedOnlyInTheFirstContainer(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").SSHAuthMountPath("/home/mpiuser/.ssh"))
	for _, tpl := range []*corev1.PodTemplateSpec{workerTemplate(job), launcherTemplate(job)} {
		tpl.Spec.Containers = append(tpl.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox"})
		tpl.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	}
	for role, spec := range builtSpecs(job) {
		first := spec.Containers[0]
		if !slices.ContainsFunc(first.VolumeMounts, func(m corev1.VolumeMount) bool { return cmp.Equal(m, sshMount("/home/mpiuser/.ssh")) }) {
			t.Errorf("%s container %s: no key mount at sshAuthMountPath in %+v", role, first.Name, first.VolumeMounts)
		}
		for _, c := range append(spec.Containers[1:], spec.InitContainers...) {
			for _, m := range c.VolumeMounts {
				if m.Name == "ssh-auth" {
					t.Errorf("%s container %s mounts the keys: %+v", role, c.Name, m)
				}
			}
		}
	}
}

// TestWorkersPresentTheJobsKeyAsHostKey: the worker's sshd is given the
// job's key as host key, sshAuthMountPath/id_rsa, on its command line, for
// root and for a non-root user alike.
func TestWorkersPresentTheJobsKeyAsHostKey(t *testing.T) {
	for _, path := range []string{"/root/.ssh", "/home/mpiuser/.ssh"} {
		job := defaulted(testjob.MakeMPIJob("pi", "ns").SSHAuthMountPath(path))
		spec := WorkerPod(job, 0, testOpts).Spec
		if diff := cmp.Diff(sshdWorkerMounts(path), spec.Containers[0].VolumeMounts); diff != "" {
			t.Errorf("%s: worker mounts (-want +got):\n%s", path, diff)
		}
		if want := []string{"-h", path + "/id_rsa"}; !slices.Equal(spec.Containers[0].Args, want) {
			t.Errorf("%s: worker args %q, want %q", path, spec.Containers[0].Args, want)
		}
		if diff := cmp.Diff(knownHostsVolume("pi"), *findVolume(&spec, "mpi-job-config")); diff != "" {
			t.Errorf("%s: worker known_hosts volume (-want +got):\n%s", path, diff)
		}
	}
}
