package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/sshkey"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// TestLargestJobsConfigMapIsAdmitted: the ConfigMap of the largest job
// builder.Validate admits, with a job name of 38 characters (10,000
// workers and more without --cluster-domain, the default) and its workers
// running in the pattern that makes discover_hosts.sh longest, is
// accepted by the API server and etcd.
func TestLargestJobsConfigMapIsAdmitted(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	w := testjob.MakeMPIJob(strings.Repeat("j", 38), ns)
	opts := builder.Options{}
	n := builder.MaxWorkers(w.Defaulted(), opts)
	if n < 10000 {
		t.Fatalf("at most %d workers for a 38-character name, want 10,000 or more", n)
	}
	job := w.Workers(n).Defaulted()
	var running []int
	for i := 0; i < int(n); i += 2 {
		running = append(running, i)
	}
	_, public, err := sshkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	cm := builder.ConfigMap(job, running, public, opts)
	cm.OwnerReferences = nil // the job itself is not created here
	if err := k8s.Create(ctx, cm); err != nil {
		t.Fatalf("the ConfigMap of %d workers (%d bytes of hostfile): %v", n, len(cm.Data[builder.HostfileKey]), err)
	}
	t.Logf("%d workers: hostfile %d bytes, discover_hosts.sh %d bytes", n, len(cm.Data[builder.HostfileKey]), len(cm.Data[builder.DiscoverHostsKey]))
}
