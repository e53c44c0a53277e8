package envtestutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAuditRead: a watch logged twice counts once, a quota's 403 is no
// RBAC denial, an RBAC 403 is, and a request of another user means the
// policy is not the one the check relies on.
func TestAuditRead(t *testing.T) {
	op := `"user":{"username":"` + OperatorUser + `"}`
	lines := []string{
		`{"auditID":"1","stage":"ResponseStarted","verb":"watch",` + op + `,"objectRef":{"resource":"pods"},"responseStatus":{"code":200}}`,
		`{"auditID":"1","stage":"ResponseComplete","verb":"watch",` + op + `,"objectRef":{"resource":"pods"},"responseStatus":{"code":200}}`,
		`{"auditID":"2","stage":"ResponseComplete","verb":"create",` + op + `,"objectRef":{"resource":"pods","namespace":"a"},"responseStatus":{"code":403,"message":"pods \"x\" is forbidden: exceeded quota: q"}}`,
		`{"auditID":"3","stage":"ResponseComplete","verb":"delete",` + op + `,"objectRef":{"resource":"pods","namespace":"a"},"responseStatus":{"code":403,"message":"pods \"x\" is forbidden: User cannot delete"}}`,
		`{"auditID":"4","stage":"ResponseComplete","verb":"get",` + op + `,"responseStatus":{"code":200}}`,
	}
	read := func(lines []string) (*Requests, error) {
		a := &Audit{Path: filepath.Join(t.TempDir(), "audit.log")}
		if err := os.WriteFile(a.Path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return a.Read()
	}
	got, err := read(lines)
	if err != nil {
		t.Fatal(err)
	}
	want := &Requests{
		Made: map[Request]int{
			{Verb: "watch", Resource: "pods"}:                  1,
			{Verb: "create", Resource: "pods", Namespace: "a"}: 1,
		},
		Denied:      map[Request]int{{Verb: "delete", Resource: "pods", Namespace: "a"}: 1},
		NonResource: 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	foreign := `{"auditID":"5","stage":"ResponseComplete","verb":"get","user":{"username":"admin"},"objectRef":{"resource":"pods"}}`
	if _, err := read(append(lines, foreign)); err == nil || !strings.Contains(err.Error(), `"admin"`) {
		t.Errorf("a request of another user in the log: err %v, want one naming the user", err)
	}
}
