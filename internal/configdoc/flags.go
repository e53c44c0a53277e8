// Package configdoc writes docs/reference/configuration.md: the flags of
// the mpi-operator binary, read from what the binary itself prints for
// -help (so the page lists exactly the flag set users get: ours, zap's,
// controller-runtime's --kubeconfig and upstream's compatible flags), and
// the values of the Helm chart with the comment above each.
package configdoc

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
)

// Flag is one flag as flag.PrintDefaults describes it.
type Flag struct {
	Name string
	// Type is the value's name in the usage line ("int", "duration",
	// "value" for custom flag.Values); "bool" for flags with none.
	Type string
	// Default is as PrintDefaults shows it (strings quoted), or empty when
	// it is the type's zero value, which PrintDefaults leaves out.
	Default string
	Usage   string
}

// defaultSuffix is what PrintDefaults appends to the usage of a flag
// whose default is not its zero value; greedy, so that only the last one
// (the appended one) is taken.
var defaultSuffix = regexp.MustCompile(`(?s)^(.*) \(default (.*)\)$`)

// ParseDefaults reads the output of flag.FlagSet.PrintDefaults (what a Go
// binary prints for -help, after a "Usage of" line). Its format is the
// flag package's documented one: each flag starts on a line "  -name
// [type]", its usage follows on lines indented by four spaces and a tab
// (on the same line, after a tab, for a one-letter bool flag).
func ParseDefaults(help string) ([]Flag, error) {
	var flags []Flag
	var usage []string
	flush := func() {
		if len(flags) == 0 {
			return
		}
		f := &flags[len(flags)-1]
		f.Usage = strings.Join(usage, "\n")
		if m := defaultSuffix.FindStringSubmatch(f.Usage); m != nil {
			f.Usage, f.Default = m[1], m[2]
		}
		usage = nil
	}
	s := bufio.NewScanner(strings.NewReader(help))
	for s.Scan() {
		line := s.Text()
		switch {
		case strings.HasPrefix(line, "Usage of ") && len(flags) == 0:
		case strings.HasPrefix(line, "    \t"):
			if len(flags) == 0 {
				return nil, fmt.Errorf("usage line before any flag: %q", line)
			}
			usage = append(usage, strings.TrimPrefix(line, "    \t"))
		case strings.HasPrefix(line, "  -"):
			flush()
			head, inline, hasInline := strings.Cut(strings.TrimPrefix(line, "  -"), "\t")
			name, typ, _ := strings.Cut(head, " ")
			if typ == "" {
				typ = "bool"
			}
			flags = append(flags, Flag{Name: name, Type: typ})
			if hasInline {
				usage = append(usage, inline)
			}
		case line == "":
		default:
			return nil, fmt.Errorf("unexpected line in flag defaults: %q", line)
		}
	}
	flush()
	return flags, s.Err()
}
