package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// The part of docs/benchmarks.md (and docs/scale.md) that make bench
// rewrites; the prose around it is written by hand. These are user pages,
// which carry no dates, hosts or commits (make docscheck): the run's date
// and host are printed instead, for the engineering records
// (docs/records/benchmarks-history.md, docs/records/scale-history.md).
const (
	docsBegin = "<!-- begin: written by make bench -->"
	docsEnd   = "<!-- end: written by make bench -->"
)

// updateDocs replaces the generated part of the docs page with this run's
// tables, the command that produced them and a link to the plot.
func updateDocs(path, command, plotFile, tables string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i, j := bytes.Index(raw, []byte(docsBegin)), bytes.Index(raw, []byte(docsEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s lacks the markers %q and %q", path, docsBegin, docsEnd)
	}
	var b strings.Builder
	b.WriteString(docsBegin + "\n\n")
	fmt.Fprintf(&b, "Measured on a machine of %d cores with:\n\n    %s\n", runtime.NumCPU(), command)
	if plotFile != "" {
		fmt.Fprintf(&b, "\n![Startup of one MPIJob against the floor](%s)\n", plotFile)
	}
	b.WriteString(tables)
	b.WriteString("\n" + docsEnd)
	out := append(append(append([]byte{}, raw[:i]...), b.String()...), raw[j+len(docsEnd):]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return err
	}
	host, _ := os.Hostname()
	fmt.Printf("wrote %s: run of %s on %s (%d cores); record it in docs/records/\n", path,
		time.Now().UTC().Format("2006-01-02 15:04 MST"), host, runtime.NumCPU())
	return nil
}
