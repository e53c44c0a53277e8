// Command registry serves an OCI distribution registry on a loopback
// address, so the local cluster's containerd pulls images the way a
// user's cluster does (docker.io mirrored to it by hosts.toml files).
// Blobs are kept on disk across restarts; manifests live in memory, and
// hack/cluster/up.sh pushes them again after a start (their blobs are
// there already, so that is a matter of seconds).
//
// usage: registry -addr 127.0.0.1:PORT -dir BLOBS
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5000", "listen address")
	dir := flag.String("dir", "", "directory for blobs")
	verbose := flag.Bool("v", false, "log every request")
	flag.Parse()
	if *dir == "" {
		log.Fatal("-dir is required")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	logger := log.New(io.Discard, "", 0)
	if *verbose {
		logger = log.New(os.Stderr, "", log.LstdFlags)
	}
	srv := &http.Server{
		Addr:              *addr,
		Handler:           registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(*dir)), registry.Logger(logger)),
		ReadHeaderTimeout: 10 * time.Second,
	}
	log.Printf("registry on http://%s, blobs in %s", *addr, *dir)
	log.Fatal(srv.ListenAndServe())
}
