package testjob

import (
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Edit applies to job the edits that data encodes, for the fuzz targets.
// Each edit sets one field of the spec, or one piece of a role's template,
// to a value picked from a short list: the values a user writes, the
// boundaries of the API's rules, the names the operator itself uses, and
// (for strings) arbitrary bytes taken from data. Decoding bytes into
// structured edits, rather than JSON into the type, lets the fuzzer's
// mutations change one field at a time instead of breaking the syntax,
// and lets the seeds be real manifests with no edit at all.
//
// Edit never panics, whatever data holds, and reads data in order, so a
// shorter input is a prefix of the same edits.
func Edit(job *kubeflow.MPIJob, data []byte) {
	s := &source{data: data}
	for !s.done() {
		edits[s.pick(len(edits))](job, s)
	}
}

// source reads choices from the fuzzer's bytes; once they run out, every
// choice is the first.
type source struct{ data []byte }

func (s *source) done() bool { return len(s.data) == 0 }

func (s *source) byte() byte {
	if len(s.data) == 0 {
		return 0
	}
	b := s.data[0]
	s.data = s.data[1:]
	return b
}

// pick returns a choice in [0, n).
func (s *source) pick(n int) int { return int(s.byte()) % n }

// raw returns up to 63 bytes of data as a string, its length read first.
func (s *source) raw() string {
	n := min(int(s.byte())%64, len(s.data))
	str := string(s.data[:n])
	s.data = s.data[n:]
	return str
}

func oneOf[T any](s *source, values ...T) T { return values[s.pick(len(values))] }

// str picks one of values or, as the last choice, raw bytes.
func str(s *source, values ...string) string {
	if i := s.pick(len(values) + 1); i < len(values) {
		return values[i]
	}
	return s.raw()
}

func int32s(s *source, values ...int32) *int32 {
	if i := s.pick(len(values) + 1); i < len(values) {
		return ptr.To(values[i])
	}
	return nil
}

var edits = []func(*kubeflow.MPIJob, *source){
	func(j *kubeflow.MPIJob, s *source) {
		j.Name = str(s, "pi", "a", strings.Repeat("a", 53), strings.Repeat("a", 54), strings.Repeat("a", 55),
			strings.Repeat("a", 63), "Pi", "1pi", "pi-", "pi.x", "-pi", "")
	},
	func(j *kubeflow.MPIJob, s *source) {
		if w := role(j, kubeflow.MPIReplicaTypeWorker); w != nil {
			w.Replicas = int32s(s, 0, 1, 2, 3, 9, 10, 11, 99, 100, 101, 1000, 10000, 100000, -1, math.MaxInt32)
		}
	},
	func(j *kubeflow.MPIJob, s *source) {
		if l := role(j, kubeflow.MPIReplicaTypeLauncher); l != nil {
			l.Replicas = int32s(s, 1, 0, 2, -1)
		}
	},
	func(j *kubeflow.MPIJob, s *source) {
		j.Spec.SlotsPerWorker = int32s(s, 1, 2, 8, 0, -1, math.MaxInt32)
	},
	func(j *kubeflow.MPIJob, s *source) {
		j.Spec.MPIImplementation = kubeflow.MPIImplementation(str(s, "", "OpenMPI", "Intel", "MPICH", "openmpi"))
	},
	func(j *kubeflow.MPIJob, s *source) {
		j.Spec.RunLauncherAsWorker = oneOf(s, nil, ptr.To(true), ptr.To(false))
	},
	func(j *kubeflow.MPIJob, s *source) {
		j.Spec.SSHAuthMountPath = str(s, "", "/root/.ssh", "/home/mpiuser/.ssh", "/root/", "/", "root/.ssh",
			"/etc/mpi", "/etc", "/home/mpiuser/.ssh/", "//x", "/a/../b", "/a/./b", "/a:b", "/root/.ssh ")
	},
	func(j *kubeflow.MPIJob, s *source) {
		j.Spec.LauncherCreationPolicy = kubeflow.LauncherCreationPolicy(str(s, "", "AtStartup", "WaitForWorkersReady"))
	},
	func(j *kubeflow.MPIJob, s *source) {
		j.Spec.RunPolicy.CleanPodPolicy = oneOf(s, nil, ptr.To(kubeflow.CleanPodPolicyNone),
			ptr.To(kubeflow.CleanPodPolicyRunning), ptr.To(kubeflow.CleanPodPolicyAll), ptr.To(kubeflow.CleanPodPolicy("Some")))
	},
	func(j *kubeflow.MPIJob, s *source) {
		j.Spec.RunPolicy.TTLSecondsAfterFinished = int32s(s, 0, 1, 60, -1, math.MaxInt32)
	},
	func(j *kubeflow.MPIJob, s *source) {
		j.Spec.RunPolicy.ActiveDeadlineSeconds = oneOf(s, nil, ptr.To[int64](1), ptr.To[int64](600),
			ptr.To[int64](0), ptr.To[int64](-1), ptr.To[int64](math.MaxInt64))
	},
	func(j *kubeflow.MPIJob, s *source) {
		j.Spec.RunPolicy.BackoffLimit = int32s(s, 0, 1, 6, -1, math.MaxInt32)
	},
	func(j *kubeflow.MPIJob, s *source) {
		j.Spec.RunPolicy.Suspend = oneOf(s, nil, ptr.To(true), ptr.To(false))
	},
	func(j *kubeflow.MPIJob, s *source) {
		j.Spec.RunPolicy.ManagedBy = oneOf(s, nil, ptr.To(""), ptr.To(kubeflow.KubeflowJobController),
			ptr.To(kubeflow.MultiKueueController), ptr.To("example.com/other"))
	},
	func(j *kubeflow.MPIJob, s *source) {
		if rs := role(j, oneOf(s, kubeflow.MPIReplicaTypeLauncher, kubeflow.MPIReplicaTypeWorker)); rs != nil {
			rs.RestartPolicy = kubeflow.RestartPolicy(str(s, "", "Always", "OnFailure", "Never", "ExitCode"))
		}
	},
	// Roles: missing, null, or one the API does not know.
	func(j *kubeflow.MPIJob, s *source) {
		r := oneOf(s, kubeflow.MPIReplicaTypeLauncher, kubeflow.MPIReplicaTypeWorker, "PS", "launcher")
		switch s.pick(3) {
		case 0:
			delete(j.Spec.MPIReplicaSpecs, r)
		case 1:
			j.Spec.MPIReplicaSpecs[r] = nil
		default:
			if j.Spec.MPIReplicaSpecs[r] == nil {
				j.Spec.MPIReplicaSpecs[r] = &kubeflow.ReplicaSpec{Template: podTemplate("c")}
			}
		}
	},
	// A piece of a role's template.
	func(j *kubeflow.MPIJob, s *source) {
		rs := role(j, oneOf(s, kubeflow.MPIReplicaTypeLauncher, kubeflow.MPIReplicaTypeWorker))
		e := templateEdits[s.pick(len(templateEdits))]
		if rs != nil {
			e(&rs.Template, s)
		}
	},
}

// role returns the spec of a role, nil when it has none.
func role(j *kubeflow.MPIJob, r kubeflow.MPIReplicaType) *kubeflow.ReplicaSpec {
	if j.Spec.MPIReplicaSpecs == nil {
		j.Spec.MPIReplicaSpecs = map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{}
	}
	return j.Spec.MPIReplicaSpecs[r]
}

// Names the operator gives to what it adds to a Pod, and the places it
// mounts them: a template using them collides with the operator.
var (
	volumeNames  = []string{"data", "ssh-auth", "mpi-job-config", "Data", ""}
	mountPaths   = []string{"/data", "/root/.ssh", "/home/mpiuser/.ssh", "/etc/mpi", "/etc/mpi/hostfile", "/tmp"}
	containerIDs = []string{"c", "launcher", "worker", "wait-for-workers", "mpi-launcher", "C", ""}
	labelKeys    = []string{"app", "training.kubeflow.org/job-name", "training.kubeflow.org/job-role",
		"training.kubeflow.org/replica-index", "batch.kubernetes.io/job-name", "controller-uid", "job-name", "a/b/c", ""}
)

// container returns the container i picks among the template's, nil when
// there is none.
func container(t *corev1.PodTemplateSpec, s *source) *corev1.Container {
	if len(t.Spec.Containers) == 0 {
		return nil
	}
	return &t.Spec.Containers[s.pick(len(t.Spec.Containers))]
}

func securityContext(c *corev1.Container) *corev1.SecurityContext {
	if c.SecurityContext == nil {
		c.SecurityContext = &corev1.SecurityContext{}
	}
	return c.SecurityContext
}

func podSecurityContext(t *corev1.PodTemplateSpec) *corev1.PodSecurityContext {
	if t.Spec.SecurityContext == nil {
		t.Spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	return t.Spec.SecurityContext
}

func ids(s *source) *int64 {
	return oneOf(s, nil, ptr.To[int64](0), ptr.To[int64](1000), ptr.To[int64](-1), ptr.To[int64](math.MaxInt32))
}

var templateEdits = []func(*corev1.PodTemplateSpec, *source){
	func(t *corev1.PodTemplateSpec, s *source) {
		if t.Labels == nil {
			t.Labels = map[string]string{}
		}
		t.Labels[str(s, labelKeys...)] = str(s, "x", "", "pi", strings.Repeat("v", 64))
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		t.Annotations[str(s, "note", "scheduling.volcano.sh/queue-name", "")] = str(s, "x", "")
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if c := container(t, s); c != nil {
			c.Command = oneOf(s, nil, []string{}, []string{"mpirun", "-n", "2", "hostname"}, []string{"/usr/sbin/sshd", "-De"}, []string{""})
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if c := container(t, s); c != nil {
			c.Args = oneOf(s, nil, []string{"-c", "true"}, []string{""})
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if c := container(t, s); c != nil {
			c.Image = str(s, "mpi", "", "mpioperator/mpi-pi:openmpi")
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if c := container(t, s); c != nil {
			c.Name = str(s, containerIDs...)
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: str(s, containerIDs...), Image: "mpi"})
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if len(t.Spec.Containers) > 0 {
			t.Spec.Containers = t.Spec.Containers[:len(t.Spec.Containers)-1]
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		t.Spec.InitContainers = append(t.Spec.InitContainers, corev1.Container{
			Name: str(s, containerIDs...), Image: "mpi",
			RestartPolicy: oneOf(s, nil, ptr.To(corev1.ContainerRestartPolicyAlways)),
		})
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		switch sc := podSecurityContext(t); s.pick(4) {
		case 0:
			sc.RunAsUser = ids(s)
		case 1:
			sc.RunAsGroup = ids(s)
		case 2:
			sc.FSGroup = ids(s)
		default:
			sc.RunAsNonRoot = oneOf(s, nil, ptr.To(true), ptr.To(false))
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if c := container(t, s); c != nil {
			switch sc := securityContext(c); s.pick(4) {
			case 0:
				sc.RunAsUser = ids(s)
			case 1:
				sc.RunAsGroup = ids(s)
			case 2:
				sc.Privileged = oneOf(s, nil, ptr.To(true))
			default:
				sc.ReadOnlyRootFilesystem = oneOf(s, nil, ptr.To(true))
			}
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		t.Spec.HostNetwork = oneOf(s, false, true)
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		t.Spec.DNSPolicy = corev1.DNSPolicy(str(s, "", "ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"))
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if t.Spec.DNSConfig == nil {
			t.Spec.DNSConfig = &corev1.PodDNSConfig{}
		}
		c := t.Spec.DNSConfig
		switch s.pick(3) {
		case 0:
			c.Nameservers = append(c.Nameservers, oneOf(s, "10.0.0.10", "1.1.1.1", "x"))
		case 1:
			// Kubernetes allows 32 search domains and 2048 characters.
			for range oneOf(s, 1, 8, 31, 32) {
				c.Searches = append(c.Searches, str(s, "example.com", "svc.cluster.local", strings.Repeat("d", 63)+".example"))
			}
		default:
			c.Options = append(c.Options, corev1.PodDNSConfigOption{Name: "ndots", Value: ptr.To("2")})
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		t.Spec.Volumes = append(t.Spec.Volumes, corev1.Volume{
			Name:         str(s, volumeNames...),
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
		})
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if c := container(t, s); c != nil {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: str(s, volumeNames...), MountPath: str(s, mountPaths...)})
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if c := container(t, s); c != nil {
			c.Env = append(c.Env, corev1.EnvVar{Name: str(s, "K_MPI_JOB_ROLE", "OMPI_MCA_orte_default_hostfile", "X", ""), Value: "v"})
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		t.Spec.Hostname = str(s, "", "h", "pi-launcher")
		t.Spec.Subdomain = str(s, "", "pi", "other")
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		t.Spec.RestartPolicy = corev1.RestartPolicy(str(s, "", "Always", "OnFailure", "Never"))
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		t.Spec.AutomountServiceAccountToken = oneOf(s, nil, ptr.To(true), ptr.To(false))
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if c := container(t, s); c != nil {
			q := oneOf(s, "1", "100m", "0", "1Gi")
			r := corev1.ResourceList{corev1.ResourceName(str(s, "cpu", "memory", "nvidia.com/gpu")): resource.MustParse(q)}
			if s.pick(2) == 0 {
				c.Resources.Requests = r
			} else {
				c.Resources.Limits = r
			}
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		if c := container(t, s); c != nil {
			c.Ports = append(c.Ports, corev1.ContainerPort{Name: str(s, "ssh", ""), ContainerPort: oneOf[int32](s, 22, 2222, 0)})
		}
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		t.Spec.SchedulingGates = append(t.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: str(s, "example.com/gate")})
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		t.Spec.ActiveDeadlineSeconds = oneOf(s, nil, ptr.To[int64](1), ptr.To[int64](0))
	},
	func(t *corev1.PodTemplateSpec, s *source) {
		t.Name = str(s, "", "tmpl")
		t.Namespace = str(s, "", "other")
	},
}
