package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
)

// requestCounts are the operator's writes as the API server saw them, by
// "verb resource[.group][/subresource]", read from the audit log that
// hack/bench/up.sh configures to record the operator's writes.
type requestCounts map[string]float64

// count reads the operator's requests logged after offset from, in
// namespace ns.
func count(a benchcluster.AuditLog, from int64, ns string) (requestCounts, error) {
	counts := requestCounts{}
	bad, err := a.Scan(from, func(ev benchcluster.AuditEvent) {
		if ev.User.Username != benchcluster.OperatorUser || ev.ObjectRef == nil || ev.ObjectRef.Namespace != ns {
			return
		}
		counts[requestKey(ev)]++
	})
	if err == nil && bad > 0 {
		err = fmt.Errorf("audit log: %d lines unreadable", bad)
	}
	return counts, err
}

func requestKey(ev benchcluster.AuditEvent) string {
	r := ev.ObjectRef
	key := ev.Verb + " " + r.Resource
	if r.APIGroup != "" {
		key += "." + r.APIGroup
	}
	if r.Subresource != "" {
		key += "/" + r.Subresource
	}
	return key
}

func (c requestCounts) writes() float64 {
	var n float64
	for _, v := range c {
		n += v
	}
	return n
}

// statusWrites are the writes of the MPIJob's status.
func (c requestCounts) statusWrites() float64 {
	var n float64
	for k, v := range c {
		if strings.HasSuffix(k, " mpijobs.kubeflow.org/status") {
			n += v
		}
	}
	return n
}

// timeline prints the operator's writes in namespace ns logged after
// offset from, in the order the API server received them, as time since
// start; a run of writes of one kind is one line, with its count.
func timeline(a benchcluster.AuditLog, from int64, ns string, start time.Time) error {
	type span struct {
		key         string
		n           int
		first, last time.Duration
	}
	var spans []span
	_, err := a.Scan(from, func(ev benchcluster.AuditEvent) {
		if ev.User.Username != benchcluster.OperatorUser || ev.ObjectRef == nil || ev.ObjectRef.Namespace != ns {
			return
		}
		key := requestKey(ev)
		got, done := ev.RequestReceived.Sub(start), ev.StageTimestamp.Sub(start)
		if i := len(spans) - 1; i >= 0 && spans[i].key == key {
			spans[i].n++
			spans[i].last = max(spans[i].last, done)
			return
		}
		spans = append(spans, span{key: key, n: 1, first: got, last: done})
	})
	for _, s := range spans {
		fmt.Printf("    %8s → %8s  %s ×%d\n", s.first.Round(time.Millisecond), s.last.Round(time.Millisecond), s.key, s.n)
	}
	return err
}

// spread prints, per kind of write in namespace ns logged after offset
// from, how many there were and when the first was received and the
// median and last completed, as time since start: where the time of many
// jobs at once went.
func spread(a benchcluster.AuditLog, from int64, ns string, start time.Time) error {
	got := map[string]time.Duration{}
	done := map[string][]time.Duration{}
	_, err := a.Scan(from, func(ev benchcluster.AuditEvent) {
		if ev.User.Username != benchcluster.OperatorUser || ev.ObjectRef == nil || ev.ObjectRef.Namespace != ns {
			return
		}
		key := requestKey(ev)
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 300 {
			key += fmt.Sprintf(" (%d)", ev.ResponseStatus.Code)
		}
		if t, ok := got[key]; !ok || ev.RequestReceived.Sub(start) < t {
			got[key] = ev.RequestReceived.Sub(start)
		}
		done[key] = append(done[key], ev.StageTimestamp.Sub(start))
	})
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return got[keys[i]] < got[keys[j]] })
	for _, k := range keys {
		fmt.Printf("    %-45s ×%-5d first %8s  median done %8s  last done %8s\n", k, len(done[k]),
			got[k].Round(time.Millisecond), median(done[k]).Round(time.Millisecond), maxOf(done[k]).Round(time.Millisecond))
	}
	return err
}
