package dockerfiles

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mpiImage is one `NAME) mpi_image NAME SUITE PACKAGES [CC]` line of
// hack/images/build.sh.
type mpiImage struct {
	suite    string
	packages []string
	cc       string
}

func mpiImages(t *testing.T, script string) map[string]mpiImage {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\s*(\w+)\) mpi_image (\S+) (\S+) (\S+)(?: "([^"]+)")? ;;`)
	out := map[string]mpiImage{}
	for _, m := range re.FindAllStringSubmatch(script, -1) {
		if m[1] != m[2] {
			t.Fatalf("build.sh: case %s builds image %s", m[1], m[2])
		}
		cc := m[5]
		if cc == "" {
			cc = "mpicc"
		}
		pkgs := strings.Split(m[4], ",")
		slices.Sort(pkgs)
		out[m[2]] = mpiImage{suite: m[3], packages: pkgs, cc: cc}
	}
	if len(out) < 3 {
		t.Fatalf("build.sh: found MPI images %v, want openmpi, openmpi5 and mpich", out)
	}
	return out
}

// TestMPIDockerfilesMatchBuildScript: each MPI image build.sh makes has a
// Dockerfile under build/images producing the same image.
func TestMPIDockerfilesMatchBuildScript(t *testing.T) {
	script := buildScript(t)
	// What every MPI image gets, read from build.sh's mpi_image.
	compile := one(t, `chroot "\$r" sh -c "cd /opt/mpi && (.*)"`, script, "the compile command")[1]
	useradd := one(t, `chroot "\$r" useradd (.*)`, script, "the user")[1]
	sshdRoot := one(t, `printf ('[^']*')\s*\\\s*\n\s*> "\$r/etc/ssh/sshd_config.d/mpi.conf"`, script, "root's sshd config")[1]
	installs := regexp.MustCompile(`install -m (\d+)( -o (\d+) -g (\d+))? "\$here/files/([^"]+)" "\$r([^"]+)"`).
		FindAllStringSubmatch(script, -1)
	if len(installs) < 2 {
		t.Fatal("build.sh: cannot find the installs of hack/images/files")
	}
	envs := regexp.MustCompile(`-env (\w+)=(\S+)`).FindAllStringSubmatch(script, -1)
	cmd := strings.Split(one(t, `-cmd (\S+)`, script, "the image's command")[1], ",")

	for name, img := range mpiImages(t, script) {
		t.Run(name, func(t *testing.T) {
			is := parse(t, filepath.Join("../../build/images", name+".Dockerfile"))
			if got := all(is, "FROM"); !slices.Equal(got, []string{"debian:" + img.suite}) {
				t.Errorf("FROM %v, want debian:%s", got, img.suite)
			}
			runs := strings.Join(all(is, "RUN"), "\n")
			m := regexp.MustCompile(`apt-get install -y --no-install-recommends ([^&]+)&&`).FindStringSubmatch(runs)
			if m == nil {
				t.Fatal("no apt-get install")
			}
			pkgs := strings.Fields(m[1])
			slices.Sort(pkgs)
			if diff := cmp.Diff(img.packages, pkgs); diff != "" {
				t.Errorf("packages (-build.sh +Dockerfile):\n%s", diff)
			}
			wantCompile := "cd /opt/mpi && " + strings.ReplaceAll(compile, "$cc", img.cc)
			if !strings.Contains(runs, wantCompile) {
				t.Errorf("no RUN %s", wantCompile)
			}
			if !strings.Contains(runs, "useradd "+useradd) {
				t.Errorf("no RUN useradd %s", useradd)
			}
			if !strings.Contains(runs, "rm -f /etc/ssh/ssh_host_*") {
				t.Error("the image keeps host keys of its own")
			}
			if !strings.Contains(runs, "printf "+sshdRoot+" > /etc/ssh/sshd_config.d/mpi.conf") {
				t.Errorf("root's sshd config is not build.sh's %s", sshdRoot)
			}
			copies := copySources(is)
			for _, c := range []string{"pi.c", "ranks.c"} {
				if copies["hack/images/files/"+c] != "/opt/mpi/" {
					t.Errorf("%s is not copied to /opt/mpi/", c)
				}
			}
			for _, in := range installs {
				src := "hack/images/files/" + in[5]
				if copies[src] != in[6] {
					t.Errorf("%s copied to %q, want %s", src, copies[src], in[6])
				}
				want := []string{"--chmod=" + in[1]}
				if in[2] != "" {
					want = []string{"--chown=" + in[3] + ":" + in[4], "--chmod=" + in[1]}
				}
				if got := copyFlags(is, src); !slices.Equal(got, want) {
					t.Errorf("%s copied with %v, want %v", src, got, want)
				}
			}
			env := strings.Join(all(is, "ENV"), " ")
			for _, e := range envs {
				if e[1] == "PATH" {
					continue // Debian's image sets it.
				}
				if !strings.Contains(" "+env+" ", " "+e[1]+"="+e[2]+" ") {
					t.Errorf("ENV lacks %s=%s", e[1], e[2])
				}
			}
			wantCmd := `["` + strings.Join(cmd, `", "`) + `"]`
			if got := all(is, "CMD"); !slices.Equal(got, []string{wantCmd}) {
				t.Errorf("CMD %v, want %s", got, wantCmd)
			}
			expectSourcesExist(t, is)
		})
	}
}

// expectSourcesExist checks that every file a Dockerfile copies from the
// build context (the repository's root) exists.
func expectSourcesExist(t *testing.T, is []instruction) {
	t.Helper()
	for src := range copySources(is) {
		if _, err := os.Stat(filepath.Join("../..", src)); err != nil {
			t.Errorf("COPY %s: %v", src, err)
		}
	}
}
