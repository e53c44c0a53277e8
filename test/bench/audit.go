package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// requestCounts are the operator's writes as the API server saw them, by
// "verb resource[.group][/subresource]", read from the audit log that
// hack/bench/up.sh configures to record the operator's writes only.
type requestCounts map[string]float64

// auditEvent holds the fields of an audit.k8s.io/v1 Event the count needs.
type auditEvent struct {
	Verb      string `json:"verb"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
}

type auditLog string

// end is the log's current size: where the next requests will start.
func (a auditLog) end() (int64, error) {
	fi, err := os.Stat(string(a))
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// count reads the requests logged after offset from, in namespace ns.
func (a auditLog) count(from int64, ns string) (requestCounts, error) {
	f, err := os.Open(string(a))
	if err != nil {
		return nil, fmt.Errorf("audit log (is the benchmark cluster from hack/bench/up.sh?): %w", err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, err
	}
	counts := requestCounts{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		if ev.ObjectRef == nil || ev.ObjectRef.Namespace != ns {
			continue
		}
		counts[requestKey(ev)]++
	}
	return counts, sc.Err()
}

func requestKey(ev auditEvent) string {
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
