package gang

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/gang"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// TestPodGroupsAsUpstream runs the Kubeflow MPI Operator's own v0.8.2
// binary (hack/build-upstream.sh) beside ours, gives both the same MPIJobs,
// and compares what they make field for field: the PodGroup (metadata,
// spec), and the scheduler name, annotations and group label of the worker
// Pods and of the launcher Job's template. The one difference allowed is
// the two labels ours puts on the PodGroup, so that its cache holds only
// its own.
func TestPodGroupsAsUpstream(t *testing.T) {
	bin := upstreamBinary(t)
	workerCPU := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	launcherCPU := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	jobs := map[string]func(ns string) *kubeflow.MPIJob{
		"defaults, queue by annotation": func(ns string) *kubeflow.MPIJob {
			return testjob.MakeMPIJob("defaults", ns).Workers(2).Requests(kubeflow.MPIReplicaTypeLauncher, launcherCPU).
				Requests(kubeflow.MPIReplicaTypeWorker, workerCPU).Annotation(volcanov1beta1.QueueNameAnnotationKey, "q-annotation").Obj()
		},
		"schedulingPolicy, workers rank higher": func(ns string) *kubeflow.MPIJob {
			return testjob.MakeMPIJob("policy", ns).Workers(3).Requests(kubeflow.MPIReplicaTypeLauncher, launcherCPU).
				Requests(kubeflow.MPIReplicaTypeWorker, workerCPU).
				PriorityClass(kubeflow.MPIReplicaTypeLauncher, "gang-low").PriorityClass(kubeflow.MPIReplicaTypeWorker, "gang-high").
				SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](2), Queue: "q", PriorityClass: "gang-high", ScheduleTimeoutSeconds: ptr.To[int32](30)}).Obj()
		},
		"launcher ranks higher, limits only": func(ns string) *kubeflow.MPIJob {
			w := testjob.MakeMPIJob("limits", ns).Workers(3).Requests(kubeflow.MPIReplicaTypeLauncher, launcherCPU).
				PriorityClass(kubeflow.MPIReplicaTypeLauncher, "gang-high").PriorityClass(kubeflow.MPIReplicaTypeWorker, "gang-low").
				SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](3)})
			w.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Template.Spec.Containers[0].Resources.Limits = workerCPU
			return w.Obj()
		},
		"minResources given": func(ns string) *kubeflow.MPIJob {
			return testjob.MakeMPIJob("given", ns).Workers(1).Requests(kubeflow.MPIReplicaTypeWorker, workerCPU).
				SchedulingPolicy(kubeflow.SchedulingPolicy{MinResources: ptr.To(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("9")})}).Obj()
		},
		"no resources": func(ns string) *kubeflow.MPIJob {
			return testjob.MakeMPIJob("bare", ns).Workers(1).Obj()
		},
	}
	modes := map[string]struct {
		podGroup  func() client.Object
		minMember func(client.Object) int32
	}{
		gang.Volcano: {
			podGroup:  func() client.Object { return &volcanov1beta1.PodGroup{} },
			minMember: func(o client.Object) int32 { return o.(*volcanov1beta1.PodGroup).Spec.MinMember },
		},
		gang.SchedulerPlugins: {
			podGroup:  func() client.Object { return &schedv1alpha1.PodGroup{} },
			minMember: func(o client.Object) int32 { return o.(*schedv1alpha1.PodGroup).Spec.MinMember },
		},
	}
	for mode, m := range modes {
		t.Run(mode, func(t *testing.T) {
			upstreamNS := "upstream-" + mode
			startUpstream(t, bin, mode, upstreamNS)
			for name, newJob := range jobs {
				t.Run(name, func(t *testing.T) {
					theirs, mine := newJob(upstreamNS), newJob(ours[mode])
					for _, j := range []*kubeflow.MPIJob{theirs, mine} {
						if err := k8s.Create(context.Background(), j); err != nil {
							t.Fatal(err)
						}
					}
					theirPG, myPG := named(m.podGroup(), theirs, theirs.Name), named(m.podGroup(), mine, mine.Name)
					get(t, theirPG)
					get(t, myPG)
					for k, v := range map[string]string{kubeflow.LabelOperatorName: kubeflow.OperatorName, kubeflow.LabelJobName: mine.Name} {
						if myPG.GetLabels()[k] != v {
							t.Errorf("our PodGroup's label %s = %q, want %q", k, myPG.GetLabels()[k], v)
						}
						labels := myPG.GetLabels()
						delete(labels, k)
						if len(labels) == 0 {
							labels = nil
						}
						myPG.SetLabels(labels)
					}
					if diff := cmp.Diff(comparable(theirPG), comparable(myPG)); diff != "" {
						t.Errorf("PodGroup (-upstream +ours):\n%s", diff)
					}
					for i := range int(mine.Workers()) {
						name := fmt.Sprintf("%s-worker-%d", mine.Name, i)
						theirPod, myPod := named(&corev1.Pod{}, theirs, name), named(&corev1.Pod{}, mine, name)
						get(t, theirPod)
						get(t, myPod)
						if diff := cmp.Diff(membership(theirPod.ObjectMeta, theirPod.Spec), membership(myPod.ObjectMeta, myPod.Spec)); diff != "" {
							t.Errorf("%s (-upstream +ours):\n%s", name, diff)
						}
					}
					theirL, myL := named(&batchv1.Job{}, theirs, theirs.Name+"-launcher"), named(&batchv1.Job{}, mine, mine.Name+"-launcher")
					get(t, theirL)
					get(t, myL)
					if diff := cmp.Diff(membership(theirL.Spec.Template.ObjectMeta, theirL.Spec.Template.Spec),
						membership(myL.Spec.Template.ObjectMeta, myL.Spec.Template.Spec)); diff != "" {
						t.Errorf("launcher Job template (-upstream +ours):\n%s", diff)
					}
				})
			}
			// Where we differ on purpose (upstream #608): with
			// WaitForWorkersReady upstream's gang counts a launcher that
			// is only made once the workers run, which they never do
			// while the gang is incomplete. Ours is the workers.
			t.Run("WaitForWorkersReady", func(t *testing.T) {
				theirs := testjob.MakeMPIJob("wait608", upstreamNS).Workers(2).WaitForWorkers().Obj()
				mine := testjob.MakeMPIJob("wait608", ours[mode]).Workers(2).WaitForWorkers().Obj()
				for _, j := range []*kubeflow.MPIJob{theirs, mine} {
					if err := k8s.Create(context.Background(), j); err != nil {
						t.Fatal(err)
					}
				}
				theirPG, myPG := named(m.podGroup(), theirs, theirs.Name), named(m.podGroup(), mine, mine.Name)
				get(t, theirPG)
				get(t, myPG)
				if got := m.minMember(theirPG); got != 3 {
					t.Errorf("upstream's minMember %d; this test expects its 2 workers + the launcher", got)
				}
				if got := m.minMember(myPG); got != 2 {
					t.Errorf("our minMember %d, want the 2 workers", got)
				}
			})
		})
	}
}

// comparable is obj without what the API server makes unique to each copy.
func comparable(obj client.Object) client.Object {
	c := obj.DeepCopyObject().(client.Object)
	c.SetNamespace("")
	c.SetUID("")
	c.SetResourceVersion("")
	c.SetGeneration(0)
	c.SetCreationTimestamp(metav1.Time{})
	c.SetManagedFields(nil)
	refs := c.GetOwnerReferences()
	for i := range refs {
		refs[i].UID = ""
	}
	c.SetOwnerReferences(refs)
	return c
}

// groupMembership is what puts a Pod in its gang.
type groupMembership struct {
	SchedulerName string
	Annotations   map[string]string
	GroupLabel    string
	Priority      string
}

func membership(meta metav1.ObjectMeta, spec corev1.PodSpec) groupMembership {
	return groupMembership{
		SchedulerName: spec.SchedulerName,
		Annotations:   maps.Clone(meta.Annotations),
		GroupLabel:    meta.Labels[schedv1alpha1.PodGroupLabel],
		Priority:      spec.PriorityClassName,
	}
}

// upstreamBinary is the path of upstream's operator: $UPSTREAM_MPI_OPERATOR,
// or what hack/build-upstream.sh builds (once per machine).
func upstreamBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("UPSTREAM_MPI_OPERATOR"); p != "" {
		return p
	}
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join("..", "..", "..", "hack", "build-upstream.sh"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("building upstream's mpi-operator: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// startUpstream runs upstream's binary with --gang-scheduling=mode as a
// cluster admin, scoped to a namespace of its own (its Lease there too).
// It always serves a health check on :8080, so one runs at a time.
func startUpstream(t *testing.T, bin, mode, ns string) {
	t.Helper()
	if l, err := net.Listen("tcp", ":8080"); err != nil {
		t.Fatalf("upstream's operator needs port 8080 for its health check: %v", err)
	} else {
		_ = l.Close()
	}
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	user, err := env.ControlPlane.AddUser(envtest.User{Name: "upstream-" + mode, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "upstream.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--kubeConfig", path, "--namespace", ns, "--lock-namespace", ns,
		"--gang-scheduling", mode, "--kube-api-qps", "100", "--kube-api-burst", "200")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			raw, _ := os.ReadFile(logPath)
			lines := strings.Split(string(raw), "\n")
			t.Logf("upstream's log (last 40 lines):\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
}
