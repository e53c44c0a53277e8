package builder

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// MaxConfigMapData is the most the values of a ConfigMap may hold: the
// API server refuses a larger one.
const MaxConfigMapData = 1 << 20

// Validate checks a defaulted job that passed kubeflow.Validate against
// what the builders add to its children, which admission does not check:
// the size of the hostfile (it depends on the options), and templates
// that use the names and paths of the volumes, mounts, init container and
// DNS search entry the builders add (the Pod API then refuses the
// duplicate). A job that fails it would have a child the API server
// refuses, every time the controller tries: the controller fails it
// instead, with a message naming the field. All were found by
// FuzzChildrenAreAdmitted.
func Validate(job *kubeflow.MPIJob, opts Options) field.ErrorList {
	var errs field.ErrorList
	if job.Spec.SSHAuthMountPath == ConfigMountPath {
		errs = append(errs, field.Invalid(field.NewPath("spec", "sshAuthMountPath"), job.Spec.SSHAuthMountPath,
			"is where the launcher's hostfile is mounted"))
	}
	if v, ok := job.Annotations[AnnotationDNSCachesDenials]; ok && v != "true" && v != "false" {
		errs = append(errs, field.NotSupported(field.NewPath("metadata", "annotations").Key(AnnotationDNSCachesDenials), v, []string{"true", "false"}))
	}
	for _, role := range []kubeflow.MPIReplicaType{kubeflow.MPIReplicaTypeLauncher, kubeflow.MPIReplicaTypeWorker} {
		if rs := job.Spec.MPIReplicaSpecs[role]; rs != nil {
			p := field.NewPath("spec", "mpiReplicaSpecs").Key(string(role)).Child("template", "spec")
			errs = append(errs, validateTemplate(job, role, &rs.Template.Spec, p, opts)...)
		}
	}
	if size := configMapSize(job, opts); size > MaxConfigMapData-configMapReserve {
		p := field.NewPath("spec", "mpiReplicaSpecs").Key(string(kubeflow.MPIReplicaTypeWorker)).Child("replicas")
		errs = append(errs, field.Invalid(p, job.Workers(), fmt.Sprintf(
			"the hostfile and discover_hosts.sh of %d workers take up to %d bytes, more than the job's ConfigMap holds (%d): at most %d workers fit with this job name; use fewer workers or a shorter name",
			job.Workers(), size, MaxConfigMapData-configMapReserve, MaxWorkers(job, opts))))
	}
	return errs
}

// configMapReserve is the room the ConfigMap keeps for known_hosts and
// ssh_config, which do not grow with the workers (a few hundred bytes).
const configMapReserve = 4 << 10

// MaxWorkers is the most workers a job like this one (its name,
// namespace, slots and MPI implementation) can have: the most whose
// hostfile and discover_hosts.sh fit in its ConfigMap.
func MaxWorkers(job *kubeflow.MPIJob, opts Options) int32 {
	probe := job.DeepCopy()
	workers := probe.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker]
	if workers == nil {
		workers = &kubeflow.ReplicaSpec{}
		if probe.Spec.MPIReplicaSpecs == nil {
			probe.Spec.MPIReplicaSpecs = map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{}
		}
		probe.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker] = workers
	}
	fits := func(n int32) bool {
		workers.Replicas = &n
		return configMapSize(probe, opts) <= MaxConfigMapData-configMapReserve
	}
	lo, hi := int64(0), int64(math.MaxInt32)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(int32(mid)) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return int32(lo)
}

// Limits of the Pod API on a Pod's DNS search list.
const (
	maxDNSSearches  = 32
	maxDNSSearchLen = 2048
)

func validateTemplate(job *kubeflow.MPIJob, role kubeflow.MPIReplicaType, spec *corev1.PodSpec, p *field.Path, opts Options) field.ErrorList {
	var errs field.ErrorList
	launcher := role == kubeflow.MPIReplicaTypeLauncher
	for i, v := range spec.Volumes {
		// Every Pod gets both: workers mount known_hosts and ssh_config
		// from the job's ConfigMap (addSSHClientConfig).
		if v.Name == sshVolumeName || v.Name == configVolumeName || v.Name == publishedVolumeName && launcher && waitsForWorkers(job) && asksDNSOnceTold(job, opts) {
			errs = append(errs, field.Invalid(p.Child("volumes").Index(i).Child("name"), v.Name,
				"is the name of a volume the operator adds"))
		}
	}
	mounts := map[string]string{job.Spec.SSHAuthMountPath: "the job's SSH keys (spec.sshAuthMountPath)"}
	for i, c := range spec.Containers {
		for j, m := range c.VolumeMounts {
			what, ok := mounts[m.MountPath]
			if m.MountPath == ConfigMountPath && (launcher || i == 0) {
				// The launcher's containers all get the hostfile there; a
				// worker's first gets known_hosts and ssh_config.
				what, ok = "the job's ConfigMap", true
			}
			if m.MountPath == PublishedMountPath && launcher && i == 0 && waitsForWorkers(job) && asksDNSOnceTold(job, opts) && !waitsInInitContainer(spec) {
				what, ok = "the operator's word that the workers' names are published", true
			}
			if ok {
				errs = append(errs, field.Invalid(p.Child("containers").Index(i).Child("volumeMounts").Index(j).Child("mountPath"),
					m.MountPath, "is where the operator mounts "+what))
			}
		}
	}
	if launcher && waitsForWorkers(job) && waitsInInitContainer(spec) {
		for _, list := range []struct {
			path       string
			containers []corev1.Container
		}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
			for i, c := range list.containers {
				if c.Name == WaitForWorkersContainer {
					errs = append(errs, field.Invalid(p.Child(list.path).Index(i).Child("name"), c.Name,
						"is the name of the init container the operator adds with launcherCreationPolicy AtStartup to a launcher whose container has no command"))
				}
			}
		}
	}
	if dns := spec.DNSConfig; dns != nil {
		searches := append(slices.Clone(dns.Searches), searchEntry(job, opts))
		if len(searches) > maxDNSSearches || len(strings.Join(searches, " ")) > maxDNSSearchLen {
			errs = append(errs, field.Invalid(p.Child("dnsConfig", "searches"), dns.Searches, fmt.Sprintf(
				"the operator adds %s: the list may then have no more than %d entries and %d characters",
				searchEntry(job, opts), maxDNSSearches, maxDNSSearchLen)))
		}
	}
	return errs
}

// configMapSize bounds the size of the hostfile and discover_hosts.sh of
// the job, whichever of its workers run, computed without building them: a
// job may ask for 2^31 workers, whose hostfile would not fit in the
// controller's memory. The hostfile's size is exact; discover_hosts.sh is
// largest with every worker running on its own ("0 2 4 ..." takes more
// than "0-9"), at most an index's digits and a separator per worker.
func configMapSize(job *kubeflow.MPIJob, opts Options) int64 {
	slots := len(strconv.Itoa(int(*job.Spec.SlotsPerWorker)))
	hostLine := func(hostLen int) int64 {
		if job.Spec.MPIImplementation == kubeflow.MPIImplementationOpenMPI {
			return int64(hostLen + len(" slots=") + slots + len("\n"))
		}
		return int64(hostLen + len(":") + slots + len("\n"))
	}
	n := int64(job.Workers())
	// Every running worker once, in the loop, and the lines around it.
	size := int64(len(DiscoverHosts(job, []int{0}, opts)) - len("0"))
	if *job.Spec.RunLauncherAsWorker {
		size += hostLine(len(HostName(job, LauncherName(job), opts)))
	}
	// The workers' hostnames differ only in the digits of their index.
	base := len(HostName(job, WorkerName(job, 0), opts)) - 1
	for digits, lo, hi := 1, int64(0), int64(10); lo < n; digits, lo, hi = digits+1, hi, hi*10 {
		size += (min(n, hi) - lo) * (hostLine(base+digits) + int64(digits+len(" ")))
	}
	return size
}
