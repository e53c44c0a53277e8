// Command metricsdoc writes docs/metrics.md from the metrics the operator
// registers (make metricsdoc; make verify checks the file is fresh).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/mpi-operator/mpi-operator/internal/metricsdoc"
)

func main() {
	out := flag.String("out", "docs/metrics.md", "file to write")
	flag.Parse()
	ms, err := metricsdoc.Metrics(context.Background())
	if err == nil {
		err = os.WriteFile(*out, metricsdoc.Markdown(ms), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "metricsdoc:", err)
		os.Exit(1)
	}
}
