package benchcluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// AuditLog is the benchmark cluster's audit log. hack/bench/up.sh's policy
// records the writes of OperatorUser only, at the Metadata level: who, what
// verb on which object, and the answer's status code. The file is not
// rotated, so an offset into it stays valid for a whole run, across API
// server restarts (the new process appends).
type AuditLog string

// AuditEvent holds the fields of an audit.k8s.io/v1 Event that the
// benchmark and the chaos test read.
type AuditEvent struct {
	Verb string `json:"verb"`
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code   int    `json:"code"`
		Reason string `json:"reason"`
	} `json:"responseStatus"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	// StageTimestamp is when the response was sent (the only stage
	// logged is ResponseComplete).
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// End is the log's current size: where the next requests will start.
func (a AuditLog) End() (int64, error) {
	fi, err := os.Stat(string(a))
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Scan calls fn for each event logged after offset from, and returns how
// many lines it could not read: an API server killed while writing leaves
// a line cut short, which the next one's first line continues.
func (a AuditLog) Scan(from int64, fn func(AuditEvent)) (int, error) {
	f, err := os.Open(string(a))
	if err != nil {
		return 0, fmt.Errorf("audit log (is the benchmark cluster from hack/bench/up.sh?): %w", err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return 0, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	bad := 0
	for {
		// A last line without its newline is being written: left for a
		// later scan.
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return bad, nil
		}
		if err != nil {
			return bad, fmt.Errorf("audit log: %w", err)
		}
		var ev AuditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			bad++
			continue
		}
		fn(ev)
	}
}
