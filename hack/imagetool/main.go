// Command imagetool turns a root filesystem tarball into an image tarball
// that `ctr images import` accepts. There is no Docker engine and no
// registry on these machines, so the project's images (MPI, pause, the
// operator) are made from files with go-containerregistry.
//
// usage: imagetool -layer rootfs.tar [-layer more.tar] -tag NAME:TAG -out image.tar
//
//	[-env K=V ...] [-entrypoint a,b] [-cmd a,b] [-user U] [-workdir D]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var layers, env list
	tag := flag.String("tag", "", "image reference, e.g. docker.io/library/mpi:v1")
	out := flag.String("out", "", "image tarball to write")
	entrypoint := flag.String("entrypoint", "", "comma-separated entrypoint")
	cmd := flag.String("cmd", "", "comma-separated command")
	user := flag.String("user", "", "user to run as")
	workdir := flag.String("workdir", "", "working directory")
	flag.Var(&layers, "layer", "uncompressed layer tarball (repeatable, bottom first)")
	flag.Var(&env, "env", "K=V environment variable (repeatable)")
	flag.Parse()
	if err := build(layers, env, *tag, *out, *entrypoint, *cmd, *user, *workdir); err != nil {
		fmt.Fprintln(os.Stderr, "imagetool:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func build(layers, env []string, tag, out, entrypoint, cmd, user, workdir string) error {
	if tag == "" || out == "" || len(layers) == 0 {
		return fmt.Errorf("-tag, -out and at least one -layer are required")
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("parsing tag: %w", err)
	}
	img := empty.Image
	for _, path := range layers {
		layer, err := tarball.LayerFromFile(path)
		if err != nil {
			return fmt.Errorf("reading layer %s: %w", path, err)
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			return fmt.Errorf("adding layer %s: %w", path, err)
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("reading config: %w", err)
	}
	cfg = cfg.DeepCopy()
	// containerd drops images of another platform on import.
	cfg.OS, cfg.Architecture = "linux", "amd64"
	if len(env) == 0 {
		env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	cfg.Config = v1.Config{Env: env, Entrypoint: split(entrypoint), Cmd: split(cmd), User: user, WorkingDir: workdir}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return fmt.Errorf("setting config: %w", err)
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}
