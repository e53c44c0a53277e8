package builder

import (
	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Where the cluster's DNS caches denials, the launcher's wait asks DNS for
// its workers' names only once the operator has published every one of
// them and said so on the launcher's Pod (AnnotationWorkersPublished),
// which the kubelet shows the wait as a file (a downward API volume). A
// name asked for before it exists is answered NXDOMAIN, and such a DNS
// keeps giving that answer for its whole TTL after the name is published
// (the Corefile kubeadm wrote before Kubernetes 1.32, NodeLocal DNSCache).
// Elsewhere the wait asks DNS at once: the kubelet shows a changed
// annotation later than CoreDNS shows the name (docs/records/measurements.md
// has both figures).

// AnnotationWorkersPublished on a launcher Pod says that every worker of
// its hostfile has its name in DNS.
const AnnotationWorkersPublished = "mpi-operator.kubeflow.org/workers-published"

// Where the launcher sees the annotation.
const (
	PublishedMountPath  = "/etc/mpi-operator"
	publishedFile       = "workers-published"
	publishedPath       = PublishedMountPath + "/" + publishedFile
	publishedVolumeName = "mpi-job-published"
)

// AnnotationDNSCachesDenials on an MPIJob, "true" or "false", overrides
// for the job what the operator knows of the cluster's DNS
// (Options.DNSCachesDenials).
const AnnotationDNSCachesDenials = "mpi-operator.kubeflow.org/dns-caches-denials"

// asksDNSOnceTold reports whether the job's launcher waits for the
// operator's word before it asks DNS.
func asksDNSOnceTold(job *kubeflow.MPIJob, opts Options) bool {
	switch job.Annotations[AnnotationDNSCachesDenials] {
	case "true":
		return true
	case "false":
		return false
	}
	return opts.DNSCachesDenials
}

// waitForWordScript waits for the operator's word, checking every 0.1 s.
// Should it not come within a minute (an operator of an older version
// leads, say), the wait goes on to ask DNS.
const waitForWordScript = `n=0
until [ -s ` + publishedPath + ` ] || [ $n -ge 600 ]; do
  [ $n -eq 0 ] && echo "waiting for the operator to publish the workers' names"
  n=$((n + 1))
  sleep 0.1 2>/dev/null || { sleep 1; n=$((n + 9)); }
done
`

// waitScript is the launcher's wait: for the operator's word first when
// told, then for the names.
func waitScript(told bool) string {
	if told {
		return waitForWordScript + waitForWorkersScript
	}
	return waitForWorkersScript
}

// WaitsForPublished reports whether a launcher Pod's wait reads
// AnnotationWorkersPublished: the Pod has the volume that shows it.
// Launcher Pods of an older operator have not.
func WaitsForPublished(p *corev1.Pod) bool {
	for _, v := range p.Spec.Volumes {
		if v.Name == publishedVolumeName && v.DownwardAPI != nil {
			return true
		}
	}
	return false
}

// addPublishedVolume shows AnnotationWorkersPublished to the container c
// of spec, which runs the wait.
func addPublishedVolume(spec *corev1.PodSpec, c *corev1.Container) {
	spec.Volumes = append(spec.Volumes, corev1.Volume{
		Name: publishedVolumeName,
		VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{
				Path:     publishedFile,
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + AnnotationWorkersPublished + "']"},
				Mode:     ptrMode(configFileMode),
			}},
		}},
	})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: publishedVolumeName, MountPath: PublishedMountPath, ReadOnly: true})
}
