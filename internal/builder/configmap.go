package builder

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
)

// ConfigMap is the job's hostfile, discover_hosts.sh, known_hosts and
// ssh_config.
// running lists the indices of the workers whose Pods run now, in
// increasing order: elastic Horovod calls discover_hosts.sh to learn which
// hosts it may use. publicKey is the job's, from its Secret (see
// KnownHosts).
func ConfigMap(job *kubeflow.MPIJob, running []int, publicKey []byte, opts Options) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: objectMeta(job, ConfigMapName(job), JobLabels(job)),
		Data: map[string]string{
			HostfileKey:      Hostfile(job, opts),
			DiscoverHostsKey: DiscoverHosts(job, running, opts),
			KnownHostsKey:    KnownHosts(job, publicKey, opts),
			SSHConfigKey:     SSHConfig,
		},
	}
}

// Hostfile lists every host of the job with its slots, in the syntax of the
// job's MPI implementation: Open MPI takes "host slots=N", Intel MPI and
// MPICH's hydra take "host:N". The launcher comes first when it runs ranks.
func Hostfile(job *kubeflow.MPIJob, opts Options) string {
	slots := " slots=" + strconv.Itoa(int(*job.Spec.SlotsPerWorker)) + "\n"
	if job.Spec.MPIImplementation != kubeflow.MPIImplementationOpenMPI {
		slots = ":" + slots[len(" slots="):]
	}
	// Every reconcile of a job builds it (its ConfigMap is compared whole),
	// so the names are put together without formatting each: the suffix
	// that HostName gives every Pod of the job, once.
	suffix, prefix, n := HostName(job, "", opts)+slots, workerNamePrefix(job), int(job.Workers())
	var b strings.Builder
	b.Grow(n * (len(prefix) + len(suffix) + 6))
	if *job.Spec.RunLauncherAsWorker {
		b.WriteString(LauncherHost(job) + slots)
	}
	var num [20]byte
	for i := range n {
		b.WriteString(prefix)
		b.Write(strconv.AppendInt(num[:0], int64(i), 10))
		b.WriteString(suffix)
	}
	return b.String()
}

// LauncherHost is the launcher's entry in the hostfile and in
// discover_hosts.sh when it runs ranks: the name its Pod's hostname(1)
// gives. MPI takes an entry for the node it runs on only when the name
// is that node's own: Open MPI 5's PRRTE keeps fully qualified names and
// did not match the launcher's Service name to itself, nor did MPICH's
// hydra, and both then ssh'd to the launcher, where no sshd listens.
// With hostNetwork the Pod's hostname is the node's, which the job does
// not know: "localhost" is the name every MPI takes for the local node.
// The workers resolve the bare name through the search domain the job's
// Pods are given (MPICH's proxies connect back to it).
func LauncherHost(job *kubeflow.MPIJob) string {
	if l := job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher]; l != nil && l.Template.Spec.HostNetwork {
		return "localhost"
	}
	return LauncherName(job)
}

// DiscoverHosts is a shell script printing "host:slots" for each running
// worker, the format of Horovod's --host-discovery-script. It lists the
// running workers as ranges of indices and prints their names in a loop,
// so it stays a few bytes per worker however long the names are: written
// out, at 10,000 workers it would take as much of the ConfigMap's 1 MiB as
// the hostfile (docs/scale.md). Only POSIX sh is used (dash, busybox).
func DiscoverHosts(job *kubeflow.MPIJob, running []int, opts Options) string {
	slots := *job.Spec.SlotsPerWorker
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	if *job.Spec.RunLauncherAsWorker {
		fmt.Fprintf(&b, "echo %s:%d\n", LauncherHost(job), slots)
	}
	if len(running) == 0 {
		return b.String()
	}
	// The workers' hostnames differ only in their index.
	prefix, suffix, _ := strings.Cut(HostName(job, WorkerName(job, 0), opts), WorkerName(job, 0))
	prefix += workerNamePrefix(job)
	b.WriteString(discoverRangesPrefix)
	b.WriteString(jobrecord.IndicesOf(running).String())
	b.WriteString("; do\n  i=${r%-*}\n  while [ \"$i\" -le \"${r#*-}\" ]; do\n")
	fmt.Fprintf(&b, "    echo \"%s$i%s:%d\"\n", prefix, suffix, slots)
	b.WriteString("    i=$((i + 1))\n  done\ndone\n")
	return b.String()
}

// discoverRangesPrefix starts the line of discover_hosts.sh that lists the
// running workers' indices.
const discoverRangesPrefix = "for r in "

// HostfileHosts returns the hosts a hostfile lists, in either syntax
// Hostfile writes.
func HostfileHosts(hostfile string) []string {
	var out []string
	for line := range strings.Lines(hostfile) {
		if host := lineHost(line); host != "" {
			out = append(out, host)
		}
	}
	return out
}

// HostfileWithout returns the hostfile without the lines of the given
// hosts.
func HostfileWithout(hostfile string, drop map[string]bool) string {
	var b strings.Builder
	for line := range strings.Lines(hostfile) {
		if !drop[lineHost(line)] {
			b.WriteString(line)
		}
	}
	return b.String()
}

func lineHost(line string) string {
	host, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	host, _, _ = strings.Cut(host, ":")
	return host
}

// DiscoveredHosts returns the hosts a discover_hosts.sh from DiscoverHosts
// prints, without running it.
func DiscoveredHosts(script string) []string {
	var out []string
	var ranges string
	for line := range strings.Lines(script) {
		line = strings.TrimSpace(line)
		if r, ok := strings.CutPrefix(line, discoverRangesPrefix); ok {
			ranges, _, _ = strings.Cut(r, ";")
			continue
		}
		rest, ok := strings.CutPrefix(line, "echo ")
		if !ok {
			continue
		}
		if tmpl, ok := strings.CutPrefix(rest, `"`); ok {
			// The loop's line: "<prefix>$i<suffix>:<slots>".
			host := lineHost(strings.TrimSuffix(tmpl, `"`))
			prefix, suffix, _ := strings.Cut(host, "$i")
			indices, _ := jobrecord.ParseIndices(ranges)
			for _, r := range indices {
				for i := r.Lo; i <= r.Hi; i++ {
					out = append(out, prefix+strconv.Itoa(i)+suffix)
				}
			}
			continue
		}
		if host := lineHost(rest); host != "" {
			out = append(out, host)
		}
	}
	return out
}
