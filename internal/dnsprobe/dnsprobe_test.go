package dnsprobe

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// fakeDNS answers every question on a UDP socket as answer says, given how
// many it answered before, and returns its address.
func fakeDNS(t *testing.T, answer func(n int, q dnsmessage.Message) dnsmessage.Message) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for n := 0; ; n++ {
			k, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var q dnsmessage.Message
			if q.Unpack(buf[:k]) != nil {
				continue
			}
			m := answer(n, q)
			out, err := m.Pack()
			if err != nil {
				panic(err)
			}
			_, _ = pc.WriteTo(out, from)
		}
	}()
	return pc.LocalAddr().String()
}

// denial is an NXDOMAIN for q with an SOA of the given TTL.
func denial(q dnsmessage.Message, ttl uint32) dnsmessage.Message {
	soaName := dnsmessage.MustNewName("cluster.local.")
	return dnsmessage.Message{
		Header:    dnsmessage.Header{ID: q.ID, Response: true, Authoritative: true, RCode: dnsmessage.RCodeNameError},
		Questions: q.Questions,
		Authorities: []dnsmessage.Resource{{
			Header: dnsmessage.ResourceHeader{Name: soaName, Type: dnsmessage.TypeSOA, Class: dnsmessage.ClassINET, TTL: ttl},
			Body: &dnsmessage.SOAResource{NS: dnsmessage.MustNewName("ns.dns.cluster.local."),
				MBox: dnsmessage.MustNewName("hostmaster.cluster.local."), Serial: 1, Refresh: 7200, Retry: 1800, Expire: 86400, MinTTL: ttl},
		}},
	}
}

func TestCachesDenials(t *testing.T) {
	gap = 0
	for name, tc := range map[string]struct {
		answer func(n int, q dnsmessage.Message) dnsmessage.Message
		want   bool
	}{
		// The kubernetes plugin answers with its ttl every time.
		"authoritative": {func(_ int, q dnsmessage.Message) dnsmessage.Message { return denial(q, 30) }, false},
		// A cache answers with the TTL left.
		"a cache": {func(n int, q dnsmessage.Message) dnsmessage.Message { return denial(q, uint32(30-n)) }, true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := CachesDenials(context.Background(), fakeDNS(t, tc.answer), "cluster.local")
			if err != nil || got != tc.want {
				t.Errorf("CachesDenials = %t, %v; want %t", got, err, tc.want)
			}
		})
	}
}

// A name that resolves, or a denial without the zone's SOA, says nothing
// of the cache: an error, not a guess.
func TestCachesDenialsWithoutAnSOAIsAnError(t *testing.T) {
	gap = 0
	for name, answer := range map[string]func(int, dnsmessage.Message) dnsmessage.Message{
		"an address": func(_ int, q dnsmessage.Message) dnsmessage.Message {
			return dnsmessage.Message{Header: dnsmessage.Header{ID: q.ID, Response: true}, Questions: q.Questions}
		},
		"no SOA": func(_ int, q dnsmessage.Message) dnsmessage.Message {
			m := denial(q, 30)
			m.Authorities = nil
			return m
		},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := CachesDenials(context.Background(), fakeDNS(t, answer), "cluster.local"); !errors.Is(err, errNoDenial) {
				t.Errorf("error %v, want errNoDenial", err)
			}
		})
	}
}

func TestNameserver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(path, []byte("search ns.svc.cluster.local svc.cluster.local\nnameserver 10.96.0.10\nnameserver 10.96.0.11\noptions ndots:5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := Nameserver(path); err != nil || got != "10.96.0.10:53" {
		t.Errorf("Nameserver = %q, %v; want 10.96.0.10:53", got, err)
	}
}
