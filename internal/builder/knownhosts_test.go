package builder

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// Public keys in the Secret's format (authorized_keys lines): this
// operator's ed25519 key, and the ECDSA P-521 key upstream's operator makes.
const (
	testPublicKey          = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdxedbaI4eiOUxVI0rRXAvusP1f0BR0qidobeq6ww6p pi\n"
	testPublicKeyNoComment = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdxedbaI4eiOUxVI0rRXAvusP1f0BR0qidobeq6ww6p"
	upstreamPublicKey      = "ecdsa-sha2-nistp521 AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjEAAACFBADuIMi1KS4pZWpj9k/cxPpUXDhoqFKV2CSZtRIaUMw2RPZIvBIav6r5l03rgi9QGYFALLA6L3GLQYWYrf8hdzJQZADEPOURQomyrjdvKkY4Q1x6IeZGoUZDUrVr2oiLBzWCuYfpZ4TaGHHXtmPzUR2D2f4/IU6mXqkfJ0/UWGVtJMbPZw==\n"
)

func TestKnownHostsPinsTheJobsKeyForItsWorkerNamesOnly(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").Workers(2))
	for name, tc := range map[string]struct {
		opts Options
		key  string
		want string
	}{
		"no cluster domain: short names, and fully qualified under the domain found": {
			opts: Options{SearchDomain: "corp.example"},
			key:  testPublicKey,
			want: "pi-worker-*.pi,[pi-worker-*.pi]:*,pi-worker-*.pi.ns.svc.corp.example,[pi-worker-*.pi.ns.svc.corp.example]:* " +
				testPublicKeyNoComment + "\n",
		},
		"nothing known of the domain: cluster.local": {
			key: testPublicKey,
			want: "pi-worker-*.pi,[pi-worker-*.pi]:*,pi-worker-*.pi.ns.svc.cluster.local,[pi-worker-*.pi.ns.svc.cluster.local]:* " +
				testPublicKeyNoComment + "\n",
		},
		"cluster domain given: the hostfile's fully qualified names": {
			opts: testOpts,
			key:  testPublicKey,
			want: "pi-worker-*.pi,[pi-worker-*.pi]:*,pi-worker-*.pi.ns.svc.cluster.test,[pi-worker-*.pi.ns.svc.cluster.test]:* " +
				testPublicKeyNoComment + "\n",
		},
		"upstream's ECDSA key, of a job whose Secret upstream's operator made": {
			opts: testOpts,
			key:  upstreamPublicKey,
			want: "pi-worker-*.pi,[pi-worker-*.pi]:*,pi-worker-*.pi.ns.svc.cluster.test,[pi-worker-*.pi.ns.svc.cluster.test]:* " +
				upstreamPublicKey,
		},
		"a key that cannot be read trusts no host": {
			opts: testOpts,
			key:  "ecdsa-sha2-nistp521 AAAA",
			want: "",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := KnownHosts(job, []byte(tc.key), tc.opts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("KnownHosts (-want +got):\n%s", diff)
			}
		})
	}
}
