// Command kubectl-mpi is the kubectl plugin `kubectl mpi`: installed on
// the PATH, kubectl runs it for `kubectl mpi ...`. The commands live in
// internal/kubectlmpi.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/mpi-operator/mpi-operator/internal/kubectlmpi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := kubectlmpi.NewCommand(kubectlmpi.Options{
		Streams: genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
	})
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		stop()
		os.Exit(1)
	}
}
