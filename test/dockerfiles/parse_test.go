package dockerfiles

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, its continuation lines
// joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, COPY, ...
	args string
}

// parse reads a Dockerfile's instructions (comments and blank lines
// dropped, "\" continuations joined).
func parse(t *testing.T, path string) []instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.Join(strings.Fields(args), " ")})
		cur.Reset()
	}
	return out
}

// all returns the arguments of every instruction of that kind.
func all(is []instruction, cmd string) []string {
	var out []string
	for _, i := range is {
		if i.cmd == cmd {
			out = append(out, i.args)
		}
	}
	return out
}

// copySources returns the build-context files of COPY instructions (not
// those copied from another stage), with their destination.
func copySources(is []instruction) map[string]string {
	out := map[string]string{}
	for _, args := range all(is, "COPY") {
		f := strings.Fields(args)
		var paths []string
		fromStage := false
		for _, a := range f {
			switch {
			case strings.HasPrefix(a, "--from="):
				fromStage = true
			case strings.HasPrefix(a, "--"):
			default:
				paths = append(paths, a)
			}
		}
		if fromStage || len(paths) < 2 {
			continue
		}
		for _, src := range paths[:len(paths)-1] {
			out[src] = paths[len(paths)-1]
		}
	}
	return out
}

// copyFlags returns the --chown/--chmod flags of the COPY of src.
func copyFlags(is []instruction, src string) []string {
	for _, args := range all(is, "COPY") {
		f := strings.Fields(args)
		if !contains(f, src) {
			continue
		}
		var flags []string
		for _, a := range f {
			if strings.HasPrefix(a, "--") {
				flags = append(flags, a)
			}
		}
		return flags
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// buildScript is hack/images/build.sh, the images CI builds and runs.
func buildScript(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../hack/images/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// one returns the first submatch of re in s, failing the test without one.
func one(t *testing.T, re, s, what string) []string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("hack/images/build.sh: cannot find %s (%s): the test needs updating with it", what, re)
	}
	return m
}
