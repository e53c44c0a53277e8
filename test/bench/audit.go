package main

import (
	"fmt"
	"strings"

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
