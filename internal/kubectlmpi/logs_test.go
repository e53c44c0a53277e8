package kubectlmpi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	tp "github.com/mpi-operator/mpi-operator/internal/testpod"
)

// fakeLogs serves "log of POD[/previous]\n" and records what was asked.
type fakeLogs struct {
	asked []string
	// broken Pods answer with an error.
	broken map[string]bool
}

func (f *fakeLogs) Stream(_ context.Context, namespace, pod string, o *corev1.PodLogOptions) (io.ReadCloser, error) {
	f.asked = append(f.asked, fmt.Sprintf("%s/%s container=%s previous=%t follow=%t", namespace, pod, o.Container, o.Previous, o.Follow))
	if f.broken[pod] {
		return nil, errors.New("node gone")
	}
	text := "log of " + pod
	if o.Previous {
		text += "/previous"
	}
	return io.NopCloser(strings.NewReader(text + "\n")), nil
}

func TestWriteLogs(t *testing.T) {
	j := job(1)
	// Listed out of order: the API returns Pods by name.
	launchers := pods(
		tp.Launcher(j, "c").Created(at(30)).Running(at(31)).Restarts(1).Obj(),
		tp.Launcher(j, "a").Created(at(10)).Running(at(11)).Exited(1, "Error", at(12)).Obj(),
		tp.Launcher(j, "b").Created(at(20)).Running(at(21)).Exited(2, "Error", at(22)).Obj(),
	)
	cases := map[string]struct {
		opts      LogsOptions
		broken    map[string]bool
		want      string
		wantAsked []string
		wantErr   bool
	}{
		"the current attempt only, no header": {
			want:      "log of pi-launcher-c\n",
			wantAsked: []string{"ns/pi-launcher-c container=launcher previous=false follow=false"},
		},
		"following the current attempt": {
			opts:      LogsOptions{Follow: true},
			want:      "log of pi-launcher-c\n",
			wantAsked: []string{"ns/pi-launcher-c container=launcher previous=false follow=true"},
		},
		"every attempt oldest first, a restarted container's previous run before its current, only the last followed": {
			opts: LogsOptions{AllAttempts: true, Follow: true},
			want: `==> attempt 1 of 4: Pod pi-launcher-a, container launcher, Failed, exit code 1 <==
log of pi-launcher-a

==> attempt 2 of 4: Pod pi-launcher-b, container launcher, Failed, exit code 2 <==
log of pi-launcher-b

==> attempt 3 of 4: Pod pi-launcher-c, container launcher, previous run <==
log of pi-launcher-c/previous

==> attempt 4 of 4: Pod pi-launcher-c, container launcher, Running <==
log of pi-launcher-c
`,
			wantAsked: []string{
				"ns/pi-launcher-a container=launcher previous=false follow=false",
				"ns/pi-launcher-b container=launcher previous=false follow=false",
				"ns/pi-launcher-c container=launcher previous=true follow=false",
				"ns/pi-launcher-c container=launcher previous=false follow=true",
			},
		},
		"an earlier attempt's log that cannot be read is noted": {
			opts:   LogsOptions{AllAttempts: true, Container: "launcher"},
			broken: map[string]bool{"pi-launcher-a": true},
			want: `==> attempt 1 of 4: Pod pi-launcher-a, container launcher, Failed, exit code 1 <==
(log unavailable: reading the log of Pod pi-launcher-a: node gone)

==> attempt 2 of 4: Pod pi-launcher-b, container launcher, Failed, exit code 2 <==
log of pi-launcher-b

==> attempt 3 of 4: Pod pi-launcher-c, container launcher, previous run <==
log of pi-launcher-c/previous

==> attempt 4 of 4: Pod pi-launcher-c, container launcher, Running <==
log of pi-launcher-c
`,
			wantAsked: []string{
				"ns/pi-launcher-a container=launcher previous=false follow=false",
				"ns/pi-launcher-b container=launcher previous=false follow=false",
				"ns/pi-launcher-c container=launcher previous=true follow=false",
				"ns/pi-launcher-c container=launcher previous=false follow=false",
			},
		},
		"the current attempt's error is the command's": {
			broken:    map[string]bool{"pi-launcher-c": true},
			wantAsked: []string{"ns/pi-launcher-c container=launcher previous=false follow=false"},
			wantErr:   true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := &fakeLogs{broken: tc.broken}
			var b strings.Builder
			err := WriteLogs(context.Background(), &b, src, launchers, tc.opts)
			if (err != nil) != tc.wantErr {
				t.Fatalf("WriteLogs error = %v, want error: %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAsked, src.asked); diff != "" {
				t.Errorf("logs asked for (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteLogsWithoutLauncher(t *testing.T) {
	if err := WriteLogs(context.Background(), io.Discard, &fakeLogs{}, nil, LogsOptions{}); err == nil {
		t.Error("WriteLogs with no launcher Pod: no error")
	}
}
