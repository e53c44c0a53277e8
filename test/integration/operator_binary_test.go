package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpi-operator/mpi-operator/test/integration/envtestutil"
)

// operatorBinary is cmd/mpi-operator built and run as a process against
// the suite's API server: what a Deployment's arguments do, tested as the
// binary takes them.
type operatorBinary struct {
	logs   *syncBuffer
	exited chan error
}

// startOperatorBinary builds the operator and runs it with args, as the
// user kubeconfig names, with env added to this process's environment. It
// is stopped with SIGINT when the test ends, and killed if it has not
// stopped within the suite's timeout (seen when its RBAC is short: the
// cache never syncs and the process ignored SIGINT for minutes).
func startOperatorBinary(t *testing.T, kubeconfig []byte, args, env []string) *operatorBinary {
	t.Helper()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "mpi-operator")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/mpi-operator").CombinedOutput(); err != nil {
		t.Fatalf("building the operator: %v\n%s", err, out)
	}
	path := filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "KUBECONFIG="+path), env...)
	o := &operatorBinary{logs: &syncBuffer{}, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = o.logs, o.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { o.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		var err error
		select {
		case err = <-o.exited:
		case <-time.After(envtestutil.Timeout):
			t.Errorf("the binary did not stop within %s of SIGINT; killed", envtestutil.Timeout)
			_ = cmd.Process.Kill()
			err = <-o.exited
		}
		if t.Failed() {
			t.Logf("operator's output (exit: %v):\n%s", err, o.logs.String())
		}
	})
	return o
}

// waitForLease waits until the binary holds the operator's Lease in ns,
// failing at once if it exits.
func (o *operatorBinary) waitForLease(t *testing.T, ns string) {
	t.Helper()
	eventually(t, "the binary holds the lease in "+ns, func(ctx context.Context) (bool, error) {
		select {
		case err := <-o.exited:
			o.exited <- err
			t.Fatalf("the binary exited: %v\n%s", err, o.logs.String())
		default:
		}
		lease := &coordinationv1.Lease{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mpi-operator"}, lease); err != nil {
			return false, err
		}
		holder := ""
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		return holder != "", fmt.Errorf("lease held by %q", holder)
	})
}
