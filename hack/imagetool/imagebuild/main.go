// Command imagebuild executes a Dockerfile without Docker, so upstream's
// own Dockerfiles (kubeflow/mpi-operator's build/base and examples) make
// the images this project tests against, and pushes them to a registry.
//
// FROM takes a root filesystem tarball for a Docker Hub base (-base
// debian:trixie=rootfs.tar, made by debootstrap), an image built earlier
// into the store, or an earlier stage; RUN runs in a chroot with its own
// mount and PID namespaces (see run.go); each RUN, COPY and WORKDIR that
// changes files becomes a layer, with whiteouts for removed paths and
// extended attributes (setcap) kept. Images go to an OCI image layout,
// tagged by an org.opencontainers.image.ref.name annotation.
//
// usage:
//
//	imagebuild build -store DIR -base REF=ROOTFS.tar -context DIR -f Dockerfile -t REF [-build-arg K=V ...]
//	imagebuild push -store DIR -registry HOST:PORT REF...
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: imagebuild build|push ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "__run":
		err = runHelper(os.Args[2:])
	case "build":
		err = buildCmd(os.Args[2:])
	case "push":
		err = pushCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %s", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func buildCmd(args []string) error {
	fl := flag.NewFlagSet("build", flag.ExitOnError)
	var bases, buildArgs list
	storeDir := fl.String("store", "", "OCI image layout holding built images")
	contextDir := fl.String("context", ".", "build context")
	file := fl.String("f", "", "Dockerfile (default CONTEXT/Dockerfile)")
	tag := fl.String("t", "", "reference of the built image")
	work := fl.String("work", "", "scratch directory (default: a new one under TMPDIR)")
	fl.Var(&bases, "base", "REF=ROOTFS.tar: a base image from a root filesystem tarball (repeatable)")
	fl.Var(&buildArgs, "build-arg", "K=V (repeatable)")
	_ = fl.Parse(args)
	if *storeDir == "" || *tag == "" {
		return fmt.Errorf("-store and -t are required")
	}
	if *file == "" {
		*file = *contextDir + "/Dockerfile"
	}
	st, err := openStore(*storeDir)
	if err != nil {
		return err
	}
	b := &builder{store: st, bases: map[string]string{}, context: *contextDir, buildArgs: map[string]string{}, work: *work}
	for _, kv := range bases {
		k, v, _ := strings.Cut(kv, "=")
		b.bases[normalize(k)] = v
	}
	for _, kv := range buildArgs {
		k, v, _ := strings.Cut(kv, "=")
		b.buildArgs[k] = v
	}
	if b.work == "" {
		if b.work, err = os.MkdirTemp("", "imagebuild-"); err != nil {
			return err
		}
	}
	defer func() { _ = os.RemoveAll(b.work) }()
	img, err := b.build(*file)
	if err != nil {
		return err
	}
	return st.put(normalize(*tag), img)
}

func pushCmd(args []string) error {
	fl := flag.NewFlagSet("push", flag.ExitOnError)
	storeDir := fl.String("store", "", "OCI image layout holding built images")
	registry := fl.String("registry", "", "HOST:PORT of a plain-http registry")
	_ = fl.Parse(args)
	st, err := openStore(*storeDir)
	if err != nil {
		return err
	}
	for _, ref := range fl.Args() {
		if err := st.push(normalize(ref), *registry); err != nil {
			return err
		}
	}
	return nil
}
