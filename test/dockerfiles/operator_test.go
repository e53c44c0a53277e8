package dockerfiles

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOperatorDockerfile: build/Dockerfile builds ./cmd/mpi-operator with
// the Go version go.mod asks for, copies every package of the module the
// binary imports, and runs it as build.sh's operator image does: the
// binary /mpi-operator as its entrypoint, as the non-root user 65532 that
// the chart's Pod also asks for.
func TestOperatorDockerfile(t *testing.T) {
	is := parse(t, "../../build/Dockerfile")
	expectSourcesExist(t, is)

	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(data))
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	froms := all(is, "FROM")
	if len(froms) != 2 {
		t.Fatalf("FROM %v, want a build stage and the runtime image", froms)
	}
	m := regexp.MustCompile(`^golang:(\d+)\.(\d+)\b`).FindStringSubmatch(froms[0])
	if m == nil {
		t.Fatalf("build stage FROM %s, want golang:<version>", froms[0])
	}
	if want := goVersion[1]; !versionAtLeast(m[1]+"."+m[2], want) {
		t.Errorf("build stage Go %s.%s, go.mod needs %s", m[1], m[2], want)
	}
	if !strings.HasPrefix(froms[1], "gcr.io/distroless/static") || !strings.Contains(froms[1], ":nonroot") {
		t.Errorf("runtime image %s, want distroless/static, nonroot", froms[1])
	}

	// Every package of this module that the binary imports is under a
	// copied directory.
	copies := copySources(is)
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "../../cmd/mpi-operator").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root = strings.TrimSuffix(root, "/test/dockerfiles") + "/"
	for _, dir := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(dir, root)
		top, _, _ := strings.Cut(rel, "/")
		if _, ok := copies[top+"/"]; !ok {
			t.Errorf("the binary imports %s, but build/Dockerfile does not copy %s/", rel, top)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if _, ok := copies[f]; !ok {
			t.Errorf("build/Dockerfile does not copy %s", f)
		}
	}
	runs := strings.Join(all(is, "RUN"), "\n")
	if !strings.Contains(runs, "CGO_ENABLED=0 go build") || !strings.Contains(runs, "./cmd/mpi-operator") {
		t.Errorf("no static build of ./cmd/mpi-operator in %q", runs)
	}

	// As hack/images/build.sh's operator image.
	script := buildScript(t)
	op := one(t, `operator\) go_image (\S+) "\$repo" (\S+) -user (\d+)`, script, "the operator image")
	if op[2] != "./cmd/mpi-operator" {
		t.Errorf("build.sh builds %s", op[2])
	}
	if got := all(is, "ENTRYPOINT"); !slices.Equal(got, []string{`["/` + op[1] + `"]`}) {
		t.Errorf("ENTRYPOINT %v, want [\"/%s\"]", got, op[1])
	}
	if got := all(is, "USER"); len(got) != 1 || !strings.HasPrefix(got[0], op[3]) {
		t.Errorf("USER %v, want %s", got, op[3])
	}
	values, err := os.ReadFile("../../charts/mpi-operator/templates/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(values), "runAsUser: "+op[3]) {
		t.Errorf("the chart's Pod does not run as user %s", op[3])
	}
}

// versionAtLeast compares "major.minor" with go.mod's "major.minor[.patch]".
func versionAtLeast(have, want string) bool {
	h := strings.Split(have, ".")
	w := strings.Split(want, ".")
	for i := 0; i < 2; i++ {
		hv, wv := atoi(h[i]), atoi(w[i])
		if hv != wv {
			return hv > wv
		}
	}
	return true
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
