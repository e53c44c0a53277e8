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
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	// Ctrl-C ends a `logs -f` or `watch` through its context.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := kubectlmpi.NewCommand(kubectlmpi.Options{
		Streams: genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
	})
	return cmd.ExecuteContext(ctx)
}
