// Command localwebhooks prepares Kueue to run as a process on this machine
// beside the local cluster (hack/kueue/up.sh): a self-signed CA and a
// serving certificate for 127.0.0.1, and Kueue's own webhook
// configurations (read from its module) cut down to the webhooks an MPIJob
// needs and pointed at https://127.0.0.1:<port> with that CA. Kueue's
// manifests expect an in-cluster Service, cert-manager or its internal
// certificate rotation, none of which a loopback process has.
//
// usage: localwebhooks -dir DIR -manifests FILE [-addr 127.0.0.1:9443] > webhooks.yaml
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", "", "directory for ca.crt, tls.crt and tls.key (kept when present)")
	manifests := flag.String("manifests", "", "Kueue's config/components/webhook/manifests.yaml")
	addr := flag.String("addr", "127.0.0.1:9443", "host:port Kueue's webhook server listens on")
	flag.Parse()
	if err := run(*dir, *manifests, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "localwebhooks:", err)
		os.Exit(1)
	}
}

func run(dir, manifests, addr string) error {
	if dir == "" || manifests == "" {
		return fmt.Errorf("-dir and -manifests are required")
	}
	if err := ensureCerts(dir); err != nil {
		return err
	}
	ca, err := os.ReadFile(filepath.Join(dir, caFile))
	if err != nil {
		return fmt.Errorf("reading the CA: %w", err)
	}
	in, err := os.ReadFile(manifests)
	if err != nil {
		return fmt.Errorf("reading Kueue's webhook manifests: %w", err)
	}
	out, err := localWebhooks(in, "https://"+addr, ca)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}
