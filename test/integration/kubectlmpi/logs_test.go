package kubectlmpi

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/kubectlmpi"
	tp "github.com/mpi-operator/mpi-operator/internal/testpod"
)

// fakeLogs stands in for the kubelet, which envtest lacks: it serves each
// Pod's name as its log and records which Pods were read.
type fakeLogs struct{ read []string }

func (f *fakeLogs) Stream(_ context.Context, ns, pod string, o *corev1.PodLogOptions) (io.ReadCloser, error) {
	f.read = append(f.read, fmt.Sprintf("%s/%s follow=%t", ns, pod, o.Follow))
	return io.NopCloser(strings.NewReader("output of " + pod + "\n")), nil
}

func TestLogsReadsTheLauncherPodsOfTheJob(t *testing.T) {
	ns := newNamespace(t)
	now := metav1.Now().Time
	job := createJob(t, ns, "pi", 1, nil, condition(kubeflow.JobCreated, T, "", ""))
	// Created in name order so that the API server's one-second
	// timestamps order them the same way (the order by creation itself is
	// a unit test's).
	createPod(t, tp.Launcher(job, "a").Scheduled("n", now).Running(now).Exited(1, "Error", now))
	createPod(t, tp.Launcher(job, "b").Scheduled("n", now).Running(now))
	// Not the launcher's: a worker, and another job's launcher.
	createPod(t, tp.Worker(job, 0).Scheduled("n", now).Running(now))
	other := createJob(t, ns, "pi2", 1, nil)
	createPod(t, tp.Launcher(other, "c"))

	cases := map[string]struct {
		args     []string
		want     string
		wantRead []string
	}{
		"the current attempt": {
			args:     []string{"logs", "pi", "-n", ns},
			want:     "output of pi-launcher-b\n",
			wantRead: []string{ns + "/pi-launcher-b follow=false"},
		},
		"every attempt, following the last": {
			args: []string{"logs", "pi", "-n", ns, "--all-attempts", "-f"},
			want: "==> attempt 1 of 2: Pod pi-launcher-a, container launcher, Failed, exit code 1 <==\noutput of pi-launcher-a\n\n" +
				"==> attempt 2 of 2: Pod pi-launcher-b, container launcher, Running <==\noutput of pi-launcher-b\n",
			wantRead: []string{ns + "/pi-launcher-a follow=false", ns + "/pi-launcher-b follow=true"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			logs := &fakeLogs{}
			var out, errOut syncBuffer
			if err := runPlugin(context.Background(), kubectlmpi.Options{LogSource: logs}, &out, &errOut, tc.args...); err != nil {
				t.Fatalf("logs: %v", err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRead, logs.read); diff != "" {
				t.Errorf("logs read (-want +got):\n%s", diff)
			}
		})
	}
}
