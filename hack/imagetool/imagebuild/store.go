package main

import (
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

const refAnnotation = "org.opencontainers.image.ref.name"

// store is an OCI image layout; each image is found by the full reference
// it was built as (docker.io/mpioperator/base:v0.8.2).
type store struct{ path layout.Path }

func openStore(dir string) (*store, error) {
	if _, err := os.Stat(dir + "/index.json"); err == nil {
		p, err := layout.FromPath(dir)
		return &store{p}, err
	}
	p, err := layout.Write(dir, empty.Index)
	return &store{p}, err
}

// normalize spells a reference in full (docker.io/library/debian:trixie).
func normalize(ref string) string {
	r, err := name.ParseReference(ref)
	if err != nil {
		return ref
	}
	return r.Name()
}

func (s *store) image(ref string) (v1.Image, error) {
	idx, err := s.path.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for i := len(m.Manifests) - 1; i >= 0; i-- {
		if m.Manifests[i].Annotations[refAnnotation] == ref {
			return idx.Image(m.Manifests[i].Digest)
		}
	}
	return nil, fmt.Errorf("image %s: not built (not in %s)", ref, s.path)
}

// put writes the image and makes it the one its reference names.
func (s *store) put(ref string, img v1.Image) error {
	if err := s.path.RemoveDescriptors(func(d v1.Descriptor) bool { return d.Annotations[refAnnotation] == ref }); err != nil {
		return err
	}
	return s.path.AppendImage(img, layout.WithAnnotations(map[string]string{refAnnotation: ref}))
}

// push sends ref's image to a plain-http registry under the same
// repository path, as a mirror of its registry serves it
// (docker.io/mpioperator/mpi-pi:openmpi -> HOST:PORT/mpioperator/mpi-pi:openmpi).
func (s *store) push(ref, registry string) error {
	img, err := s.image(ref)
	if err != nil {
		return err
	}
	r, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	dst, err := name.NewTag(fmt.Sprintf("%s/%s:%s", registry, r.RepositoryStr(), r.TagStr()), name.Insecure)
	if err != nil {
		return err
	}
	if err := remote.Write(dst, img); err != nil {
		return fmt.Errorf("pushing %s to %s: %w", ref, dst, err)
	}
	fmt.Fprintf(os.Stderr, ">> pushed %s as %s\n", ref, dst)
	return nil
}
