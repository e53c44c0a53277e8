package builder

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// EnvJobRole tells a container which role it plays.
const EnvJobRole = "K_MPI_JOB_ROLE"

// File modes of the key files. Root reads its keys alone. A non-root user
// reads them through the Pod's fsGroup: the files stay owned by root, which
// OpenSSH accepts for a private key only because the user does not own it.
// Never world-readable, unlike the 0644 other operators use.
const (
	rootKeyMode    int32 = 0o600
	nonRootKeyMode int32 = 0o440
	configFileMode int32 = 0o444
	scriptFileMode int32 = 0o555
)

// podTemplate returns a copy of the role's template with the job's labels
// laid over the template's own (ours win: the controller selects by them).
func podTemplate(job *kubeflow.MPIJob, role kubeflow.MPIReplicaType, labels map[string]string) corev1.PodTemplateSpec {
	t := *job.Spec.MPIReplicaSpecs[role].Template.DeepCopy()
	merged := maps.Clone(t.Labels)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, labels)
	t.Labels = merged
	return t
}

// isRootSSHPath reports whether the keys are mounted for root. Any other
// home means a non-root user, who reads the keys through fsGroup.
func isRootSSHPath(path string) bool {
	return path == "/root/.ssh" || strings.HasPrefix(path, "/root/")
}

// addSSHAuth mounts the job's key pair at sshAuthMountPath, as the private
// key, the public key and authorized_keys, in the first container only:
// the one that runs mpirun or sshd, as upstream mounts it. Sidecars and
// init containers never need the private key.
func addSSHAuth(job *kubeflow.MPIJob, spec *corev1.PodSpec) {
	mode := rootKeyMode
	if !isRootSSHPath(job.Spec.SSHAuthMountPath) {
		mode = nonRootKeyMode
		setFSGroup(spec)
	}
	spec.Volumes = append(spec.Volumes, corev1.Volume{
		Name: sshVolumeName,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  SSHSecretName(job),
			DefaultMode: ptr.To(mode),
			Items: []corev1.KeyToPath{
				{Key: corev1.SSHAuthPrivateKey, Path: sshPrivateKeyFile},
				{Key: SSHPublicKeyKey, Path: sshPublicKeyFile},
				{Key: SSHPublicKeyKey, Path: sshAuthorizedFile},
			},
		}},
	})
	if len(spec.Containers) == 0 {
		return
	}
	c := &spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts,
		corev1.VolumeMount{Name: sshVolumeName, MountPath: job.Spec.SSHAuthMountPath, ReadOnly: true})
}

// sshdHostKeyFile is where sshd looks for its ed25519 host key when its
// configuration names none: root's sshd in upstream's images, and in most
// images, is configured so.
const sshdHostKeyFile = "/etc/ssh/ssh_host_ed25519_key"

// olderSSHDHostKeyFile is the first default host key file the versions
// before mounted the job's key over (with the ecdsa and ed25519 files).
const olderSSHDHostKeyFile = "/etc/ssh/ssh_host_rsa_key"

// addHostKeys makes the job's key the host key of the worker's sshd. The
// launcher's known_hosts pins that key, an ed25519 one, and ssh asks a
// server for the key type that known_hosts holds for it (ed25519 comes
// first in its defaults too), so the image's RSA and ECDSA keys are never
// asked for; a server that offered only those would be refused. Upstream's
// non-root sshd_config names sshAuthMountPath/id_rsa as its HostKey.
//
// When the worker's first container runs sshd itself (its command, or the
// default one), the key is given to it with -h: a host key on sshd's
// command line comes before those of its configuration, and sshd presents
// the first key of a type. Otherwise the key is mounted, in place of the
// image's own ed25519 key, over sshd's default ed25519 host key file, so
// that root's sshd of an image that ships keys made at build time
// presents the job's key too. Those are subPath mounts, which the kubelet
// makes before it creates the container, slowly when many Pods start at
// once (docs/records/measurements.md).
// The public half is mounted too, or sshd complains that it does not
// match.
func addHostKeys(job *kubeflow.MPIJob, spec *corev1.PodSpec) {
	if len(spec.Containers) == 0 {
		return
	}
	c := &spec.Containers[0]
	if runsSSHD(c) {
		c.Args = append(c.Args, "-h", path.Join(job.Spec.SSHAuthMountPath, sshPrivateKeyFile))
		return
	}
	c.VolumeMounts = append(c.VolumeMounts,
		corev1.VolumeMount{Name: sshVolumeName, MountPath: sshdHostKeyFile, SubPath: sshPrivateKeyFile, ReadOnly: true},
		corev1.VolumeMount{Name: sshVolumeName, MountPath: sshdHostKeyFile + ".pub", SubPath: sshPublicKeyFile, ReadOnly: true})
}

// runsSSHD reports whether a container's command is sshd itself, given no
// host key of its own on the command line.
func runsSSHD(c *corev1.Container) bool {
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(argv) == 0 || path.Base(argv[0]) != "sshd" {
		return false
	}
	return !slices.ContainsFunc(argv[1:], func(a string) bool { return strings.HasPrefix(a, "-h") })
}

// setFSGroup makes the key files group-readable by the Pod's user when the
// template says who that is and sets no fsGroup itself. Images usually give
// their user a group of the same number, so the user id stands in for a
// missing group id.
func setFSGroup(spec *corev1.PodSpec) {
	if spec.SecurityContext != nil && spec.SecurityContext.FSGroup != nil {
		return
	}
	gid := podGroupID(spec)
	if gid == nil {
		return
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	spec.SecurityContext.FSGroup = gid
}

func podGroupID(spec *corev1.PodSpec) *int64 {
	var candidates []*int64
	if sc := spec.SecurityContext; sc != nil {
		candidates = append(candidates, sc.RunAsGroup)
	}
	for _, c := range spec.Containers {
		if c.SecurityContext != nil {
			candidates = append(candidates, c.SecurityContext.RunAsGroup)
		}
	}
	if sc := spec.SecurityContext; sc != nil {
		candidates = append(candidates, sc.RunAsUser)
	}
	for _, c := range spec.Containers {
		if c.SecurityContext != nil {
			candidates = append(candidates, c.SecurityContext.RunAsUser)
		}
	}
	for _, id := range candidates {
		if id != nil {
			return ptr.To(*id)
		}
	}
	return nil
}

// addEnv puts the given variables before each container's own, so a
// variable the user sets in the template wins (the last duplicate wins).
func addEnv(spec *corev1.PodSpec, env []corev1.EnvVar) {
	for i := range spec.Containers {
		c := &spec.Containers[i]
		c.Env = append(append([]corev1.EnvVar{}, env...), c.Env...)
	}
}

// placeUnderService gives the Pod the DNS name hostname.<service>, and
// adds the Service's domain to the Pod's DNS search list, so that the job's
// Pods also resolve each other by hostname alone: MPICH's and Intel MPI's
// proxies call the launcher back by the name it gives itself.
func placeUnderService(job *kubeflow.MPIJob, spec *corev1.PodSpec, hostname string, opts Options) {
	spec.Hostname = hostname
	spec.Subdomain = ServiceName(job)
	if spec.DNSConfig == nil {
		spec.DNSConfig = &corev1.PodDNSConfig{}
	}
	spec.DNSConfig.Searches = append(spec.DNSConfig.Searches, searchEntry(job, opts))
	// A Pod on the host's network gets the node's resolver unless told
	// otherwise, and would never resolve the job's other Pods.
	if spec.HostNetwork && spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
}

// searchEntry is the DNS search domain of the job's Service.
func searchEntry(job *kubeflow.MPIJob, opts Options) string {
	return fmt.Sprintf("%s.%s.svc.%s", ServiceName(job), job.Namespace, opts.searchDomain())
}

// noTokenByDefault keeps the ServiceAccount token out of the Pod unless the
// template asks for it: MPI never talks to the API server.
func noTokenByDefault(spec *corev1.PodSpec) {
	if spec.AutomountServiceAccountToken == nil {
		spec.AutomountServiceAccountToken = ptr.To(false)
	}
}
