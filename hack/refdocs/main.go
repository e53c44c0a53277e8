// Command refdocs writes docs/reference/configuration.md from the flags
// the mpi-operator binary prints for -help and from the chart's
// values.yaml (make refdocs, which also writes docs/reference/api.md with
// crd-ref-docs; make verify checks both are fresh).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mpi-operator/mpi-operator/internal/configdoc"
)

func main() {
	out := flag.String("out", "docs/reference/configuration.md", "file to write")
	values := flag.String("values", "charts/mpi-operator/values.yaml", "the chart's values")
	flag.Parse()
	if err := run(*out, *values); err != nil {
		fmt.Fprintln(os.Stderr, "refdocs:", err)
		os.Exit(1)
	}
}

func run(out, valuesPath string) error {
	help, err := operatorHelp()
	if err != nil {
		return err
	}
	flags, err := configdoc.ParseDefaults(help)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(valuesPath)
	if err != nil {
		return err
	}
	values, err := configdoc.ParseValues(data)
	if err != nil {
		return err
	}
	return os.WriteFile(out, configdoc.Markdown(flags, values), 0o644)
}

// operatorHelp builds ./cmd/mpi-operator and returns what it prints for
// -help. $KUBEFLOW_NAMESPACE is the default of --namespace, so it is left
// out of the binary's environment: the page shows the built-in default.
func operatorHelp() (string, error) {
	dir, err := os.MkdirTemp("", "refdocs")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "mpi-operator")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mpi-operator")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building mpi-operator: %w", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "-help")
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBEFLOW_NAMESPACE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("mpi-operator -help: %w: %s", err, stderr.String())
	}
	return stderr.String(), nil
}
