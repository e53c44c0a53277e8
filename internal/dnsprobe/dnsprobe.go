// Package dnsprobe finds out whether the cluster's DNS caches its
// negative answers: whether a name asked for before it exists keeps its
// NXDOMAIN for a while after it is made. The launcher's wait for its
// workers' names depends on it (builder/published.go).
package dnsprobe

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// gap is how long apart the two questions are: a cache counts a TTL down
// in whole seconds.
var gap = 1500 * time.Millisecond

// CachesDenials asks the DNS server twice, gap apart and from one socket
// (so a Service's connection tracking sends both to one replica), for a
// name of the given zone that nobody has asked for. An authoritative
// answer gives the zone's SOA with the same TTL each time; a cache gives
// the TTL it has left, lower the second time.
func CachesDenials(ctx context.Context, server, zone string) (bool, error) {
	name, err := uniqueName(zone)
	if err != nil {
		return false, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", server)
	if err != nil {
		return false, err
	}
	defer func() { _ = conn.Close() }()
	first, err := soaTTL(ctx, conn, name, 1)
	if err != nil {
		return false, err
	}
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-time.After(gap):
	}
	second, err := soaTTL(ctx, conn, name, 2)
	if err != nil {
		return false, err
	}
	return second < first, nil
}

// uniqueName is a name under zone that no one has asked for.
func uniqueName(zone string) (dnsmessage.Name, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return dnsmessage.Name{}, err
	}
	return dnsmessage.NewName("mpi-operator-probe-" + hex.EncodeToString(b) + "." + strings.TrimSuffix(zone, ".") + ".")
}

// errNoDenial is an answer that is not an NXDOMAIN with the zone's SOA.
var errNoDenial = errors.New("not an NXDOMAIN with an SOA record")

// soaTTL asks for name's A record and returns the TTL of the SOA record
// of the NXDOMAIN answer.
func soaTTL(ctx context.Context, conn net.Conn, name dnsmessage.Name, id uint16) (uint32, error) {
	q := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: id, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}},
	}
	packed, err := q.Pack()
	if err != nil {
		return 0, err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(5 * time.Second)
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return 0, err
	}
	if _, err := conn.Write(packed); err != nil {
		return 0, err
	}
	buf := make([]byte, 1500)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return 0, err
		}
		var m dnsmessage.Message
		if err := m.Unpack(buf[:n]); err != nil || m.ID != id {
			continue // a late answer to the first question
		}
		if m.RCode != dnsmessage.RCodeNameError {
			return 0, fmt.Errorf("%s: %w (rcode %v)", name, errNoDenial, m.RCode)
		}
		for _, rr := range m.Authorities {
			if rr.Header.Type == dnsmessage.TypeSOA {
				return rr.Header.TTL, nil
			}
		}
		return 0, fmt.Errorf("%s: %w", name, errNoDenial)
	}
}

// Nameserver is the first nameserver of a resolv.conf, with DNS's port.
func Nameserver(resolvConf string) (string, error) {
	f, err := os.Open(resolvConf)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) >= 2 && fields[0] == "nameserver" {
			return net.JoinHostPort(fields[1], "53"), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s names no nameserver", resolvConf)
}
