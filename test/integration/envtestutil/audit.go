package envtestutil

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// auditPolicy logs every request of the operator's user, and nobody
// else's, with no bodies: the verb, the resource and the response code
// are all the RBAC check reads.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: ["` + OperatorUser + `"]
- level: None
`

// Audit is the audit log of the operator's requests on one envtest API
// server.
type Audit struct {
	// Path is the log, one JSON event a line.
	Path string
}

// EnableAudit makes env's kube-apiserver, once started, log the operator's
// requests to a file in dir. The log backend's default mode, blocking,
// writes each event before the response is sent, so a request the client
// saw answered is in the log.
func EnableAudit(env *envtest.Environment, dir string) (*Audit, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	a := &Audit{Path: filepath.Join(dir, "audit.log")}
	api := env.ControlPlane.GetAPIServer().Configure()
	api.Set("audit-policy-file", policy)
	api.Set("audit-log-path", a.Path)
	api.Set("audit-log-format", "json")
	return a, nil
}

// auditEvent holds the fields of an audit.k8s.io/v1 Event the check needs.
type auditEvent struct {
	AuditID string `json:"auditID"`
	Verb    string `json:"verb"`
	User    struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
}

// Request is one kind of request, as the API server authorized it.
type Request struct {
	Verb, Group, Resource, Subresource string
	// Namespace is empty for a request across all namespaces (a list or
	// watch of every namespace) or on a cluster-scoped object.
	Namespace string
}

func (r Request) String() string {
	s := r.Verb + " " + resourceString(r.Group, r.Resource, r.Subresource)
	if r.Namespace != "" {
		s += " in " + r.Namespace
	} else {
		s += " (all namespaces or cluster-scoped)"
	}
	return s
}

func resourceString(group, resource, sub string) string {
	s := resource
	if sub != "" {
		s += "/" + sub
	}
	if group != "" {
		s += "." + group
	}
	return s
}

// Requests is what the operator asked of the API server.
type Requests struct {
	// Made counts the requests of each kind the server did not refuse
	// for lack of permission.
	Made map[Request]int
	// Denied counts those refused with 403 Forbidden by RBAC or by an
	// admission plugin that checks RBAC (any 403 but a quota's).
	Denied map[Request]int
	// NonResource counts requests for paths such as /api and /version,
	// which every authenticated user may make.
	NonResource int
}

// Total is the number of requests read.
func (r *Requests) Total() int {
	n := r.NonResource
	for _, c := range r.Made {
		n += c
	}
	for _, c := range r.Denied {
		n += c
	}
	return n
}

// Read reads the operator's requests from the log. A watch still open is
// logged as started only; every other request as complete.
func (a *Audit) Read() (*Requests, error) {
	f, err := os.Open(a.Path)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer func() { _ = f.Close() }()
	reqs := &Requests{Made: map[Request]int{}, Denied: map[Request]int{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log %s: %w", a.Path, err)
		}
		// The policy logs only the operator; a stray user would mean the
		// policy, and so the check, is not what it claims.
		if ev.User.Username != OperatorUser {
			return nil, fmt.Errorf("audit log %s holds a request of %q", a.Path, ev.User.Username)
		}
		// A watch logs ResponseStarted and, once closed, ResponseComplete;
		// a refused request is answered at once, so logs only the latter.
		if seen[ev.AuditID] {
			continue
		}
		seen[ev.AuditID] = true
		// A quota refuses with 403 too, after RBAC allowed the request.
		denied := ev.ResponseStatus != nil && ev.ResponseStatus.Code == 403 &&
			!strings.Contains(ev.ResponseStatus.Message, "exceeded quota")
		if ev.ObjectRef == nil {
			reqs.NonResource++
			continue
		}
		r := Request{Verb: ev.Verb, Group: ev.ObjectRef.APIGroup, Resource: ev.ObjectRef.Resource,
			Subresource: ev.ObjectRef.Subresource, Namespace: ev.ObjectRef.Namespace}
		if denied {
			reqs.Denied[r]++
		} else {
			reqs.Made[r]++
		}
	}
	return reqs, sc.Err()
}
