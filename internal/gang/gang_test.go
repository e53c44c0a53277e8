package gang

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

const (
	launcher = kubeflow.MPIReplicaTypeLauncher
	worker   = kubeflow.MPIReplicaTypeWorker
)

func cpu(s string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s)}
}

func cpuMem(c, m string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(c), corev1.ResourceMemory: resource.MustParse(m)}
}

// priorities is a cluster with two PriorityClasses.
func priorities(name string) (int32, bool) {
	v, ok := map[string]int32{"high": 1000, "low": 10}[name]
	return v, ok
}

func meta(job *kubeflow.MPIJob) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: job.Name, Namespace: job.Namespace,
		Labels: map[string]string{kubeflow.LabelOperatorName: kubeflow.OperatorName, kubeflow.LabelJobName: job.Name},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob", Name: job.Name, UID: job.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}
}

func TestNewPicksTheSchedulerAsUpstreamReadsTheFlag(t *testing.T) {
	cases := map[string]struct {
		name      string
		wantNil   bool
		wantKind  client.Object
		wantSched string
	}{
		"off":                      {name: "", wantNil: true},
		"volcano":                  {name: "volcano", wantKind: &volcanov1beta1.PodGroup{}, wantSched: "volcano"},
		"scheduler-plugins":        {name: "scheduler-plugins", wantKind: &schedv1alpha1.PodGroup{}, wantSched: "scheduler-plugins"},
		"another scheduler's name": {name: "my-coscheduler", wantKind: &schedv1alpha1.PodGroup{}, wantSched: "my-coscheduler"},
		"kubernetes' Workload API": {name: "kubernetes", wantKind: &schedulingv1alpha3.Workload{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			g, err := New(tc.name, s)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantNil {
				if g != nil || Kinds(g) != nil {
					t.Fatalf("New(%q) = %v, want nil", tc.name, g)
				}
				return
			}
			if diff := cmp.Diff(tc.wantKind, Kinds(g)[0]); diff != "" {
				t.Errorf("first kind (-want +got):\n%s", diff)
			}
			for _, k := range Kinds(g) {
				if _, _, err := s.ObjectKinds(k); err != nil {
					t.Errorf("%T not registered: %v", k, err)
				}
			}
			tmpl := &corev1.PodTemplateSpec{}
			g.Decorate(tmpl, testjob.MakeMPIJob("pi", "ns").Obj())
			if tmpl.Spec.SchedulerName != tc.wantSched {
				t.Errorf("schedulerName = %q, want %q", tmpl.Spec.SchedulerName, tc.wantSched)
			}
		})
	}
}

func TestMinMember(t *testing.T) {
	cases := map[string]struct {
		job  *testjob.Wrapper
		want int32
	}{
		"workers and launcher":                                             {job: testjob.MakeMPIJob("pi", "ns").Workers(4), want: 5},
		"minAvailable":                                                     {job: testjob.MakeMPIJob("pi", "ns").Workers(4).SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](2)}), want: 2},
		"minAvailable 0":                                                   {job: testjob.MakeMPIJob("pi", "ns").Workers(4).SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](0)}), want: 0},
		"WaitForWorkersReady: workers only":                                {job: testjob.MakeMPIJob("pi", "ns").Workers(4).WaitForWorkers(), want: 4},
		"WaitForWorkersReady lowers minAvailable":                          {job: testjob.MakeMPIJob("pi", "ns").Workers(4).WaitForWorkers().SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](5)}), want: 4},
		"WaitForWorkersReady keeps a smaller minAvailable":                 {job: testjob.MakeMPIJob("pi", "ns").Workers(4).WaitForWorkers().SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](3)}), want: 3},
		"WaitForWorkersReady without workers: the launcher starts at once": {job: testjob.MakeMPIJob("pi", "ns").Workers(0).LauncherAsWorker().WaitForWorkers(), want: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := MinMember(tc.job.Defaulted()); got != tc.want {
				t.Errorf("MinMember = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestVolcanoPodGroup(t *testing.T) {
	base := func() *testjob.Wrapper {
		return testjob.MakeMPIJob("pi", "ns").Workers(3).Requests(launcher, cpu("1")).Requests(worker, cpuMem("2", "1Gi"))
	}
	cases := map[string]struct {
		job  *testjob.Wrapper
		want volcanov1beta1.PodGroupSpec
	}{
		"defaults: every Pod, queue from the job's annotation": {
			job:  base().Annotation(volcanov1beta1.QueueNameAnnotationKey, "q-annot"),
			want: volcanov1beta1.PodGroupSpec{MinMember: 4, Queue: "q-annot", MinResources: ptr.To(cpuMem("7", "3Gi"))},
		},
		"schedulingPolicy wins; scheduleTimeoutSeconds has no field": {
			job: base().Annotation(volcanov1beta1.QueueNameAnnotationKey, "q-annot").PriorityClass(launcher, "low").
				SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](2), Queue: "q", PriorityClass: "high",
					MinResources: ptr.To(cpu("9")), ScheduleTimeoutSeconds: ptr.To[int32](30)}),
			want: volcanov1beta1.PodGroupSpec{MinMember: 2, Queue: "q", PriorityClassName: "high", MinResources: ptr.To(cpu("9"))},
		},
		"priority class from the launcher's template, then the workers'": {
			job:  base().PriorityClass(worker, "low"),
			want: volcanov1beta1.PodGroupSpec{MinMember: 4, PriorityClassName: "low", MinResources: ptr.To(cpuMem("7", "3Gi"))},
		},
		"fewer members than Pods, same priority: the workers are cut": {
			job:  base().SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](2)}),
			want: volcanov1beta1.PodGroupSpec{MinMember: 2, MinResources: ptr.To(cpuMem("3", "1Gi"))},
		},
		"fewer members than Pods, launcher ranks higher: the workers are cut": {
			job: base().PriorityClass(launcher, "high").PriorityClass(worker, "low").
				SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](3)}),
			want: volcanov1beta1.PodGroupSpec{MinMember: 3, PriorityClassName: "high", MinResources: ptr.To(cpuMem("5", "2Gi"))},
		},
		"fewer members than Pods, workers rank higher: upstream cuts the launcher's count": {
			job: base().PriorityClass(launcher, "low").PriorityClass(worker, "high").
				SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](3)}),
			// 3 workers and minMember-1 = 2 launchers.
			want: volcanov1beta1.PodGroupSpec{MinMember: 3, PriorityClassName: "low", MinResources: ptr.To(cpuMem("8", "3Gi"))},
		},
		"a PriorityClass that does not exist counts as 0": {
			job: base().PriorityClass(launcher, "missing").PriorityClass(worker, "low").
				SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](3)}),
			// workers (10) rank higher than the launcher (0).
			want: volcanov1beta1.PodGroupSpec{MinMember: 3, PriorityClassName: "missing", MinResources: ptr.To(cpuMem("8", "3Gi"))},
		},
		"limits stand in for missing requests": {
			job: func() *testjob.Wrapper {
				w := base()
				w.Spec.MPIReplicaSpecs[worker].Template.Spec.Containers[0].Resources.Limits = cpuMem("5", "2Gi")
				return w
			}(),
			want: volcanov1beta1.PodGroupSpec{MinMember: 4, MinResources: ptr.To(cpuMem("7", "3Gi"))},
		},
		"no resources: an empty list, as upstream": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(2),
			want: volcanov1beta1.PodGroupSpec{MinMember: 3, MinResources: &corev1.ResourceList{}},
		},
		"an empty gang has no resources": {
			job:  base().SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](0)}),
			want: volcanov1beta1.PodGroupSpec{MinMember: 0},
		},
		"WaitForWorkersReady: the gang is the workers (#608)": {
			job:  base().WaitForWorkers(),
			want: volcanov1beta1.PodGroupSpec{MinMember: 3, MinResources: ptr.To(cpuMem("6", "3Gi"))},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := tc.job.Defaulted()
			got := volcano{}.Groups(job, priorities)
			want := []client.Object{&volcanov1beta1.PodGroup{ObjectMeta: meta(job), Spec: tc.want}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("PodGroup (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSchedulerPluginsPodGroup(t *testing.T) {
	base := func() *testjob.Wrapper {
		return testjob.MakeMPIJob("pi", "ns").Workers(2).Requests(launcher, cpu("1")).Requests(worker, cpu("2"))
	}
	cases := map[string]struct {
		job  *testjob.Wrapper
		want schedv1alpha1.PodGroupSpec
	}{
		"defaults: every Pod, timeout 0": {
			job:  base(),
			want: schedv1alpha1.PodGroupSpec{MinMember: 3, MinResources: cpu("5"), ScheduleTimeoutSeconds: ptr.To[int32](0)},
		},
		"schedulingPolicy; queue and priority class have no field": {
			job: base().SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](2), Queue: "q", PriorityClass: "high",
				ScheduleTimeoutSeconds: ptr.To[int32](30)}),
			want: schedv1alpha1.PodGroupSpec{MinMember: 2, MinResources: cpu("3"), ScheduleTimeoutSeconds: ptr.To[int32](30)},
		},
		"no resources: none": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(2),
			want: schedv1alpha1.PodGroupSpec{MinMember: 3, MinResources: corev1.ResourceList{}, ScheduleTimeoutSeconds: ptr.To[int32](0)},
		},
		"WaitForWorkersReady: the gang is the workers (#608)": {
			job:  base().WaitForWorkers(),
			want: schedv1alpha1.PodGroupSpec{MinMember: 2, MinResources: cpu("4"), ScheduleTimeoutSeconds: ptr.To[int32](0)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := tc.job.Defaulted()
			got := schedulerPlugins{schedulerName: "sp"}.Groups(job, priorities)
			want := []client.Object{&schedv1alpha1.PodGroup{ObjectMeta: meta(job), Spec: tc.want}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("PodGroup (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNativeWorkloadAndPodGroup(t *testing.T) {
	cases := map[string]struct {
		job      *testjob.Wrapper
		minCount int32
		pc       string
	}{
		"every Pod":                    {job: testjob.MakeMPIJob("pi", "ns").Workers(3), minCount: 4},
		"minAvailable, priority class": {job: testjob.MakeMPIJob("pi", "ns").Workers(3).SchedulingPolicy(kubeflow.SchedulingPolicy{MinAvailable: ptr.To[int32](2), PriorityClass: "high"}), minCount: 2, pc: "high"},
		"WaitForWorkersReady (#608)":   {job: testjob.MakeMPIJob("pi", "ns").Workers(3).WaitForWorkers(), minCount: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := tc.job.Defaulted()
			policy := schedulingv1alpha3.PodGroupSchedulingPolicy{Gang: &schedulingv1alpha3.GangSchedulingPolicy{MinCount: tc.minCount}}
			want := []client.Object{
				&schedulingv1alpha3.Workload{ObjectMeta: meta(job), Spec: schedulingv1alpha3.WorkloadSpec{
					ControllerRef:     &schedulingv1alpha3.TypedLocalObjectReference{APIGroup: "kubeflow.org", Kind: "MPIJob", Name: "pi"},
					PodGroupTemplates: []schedulingv1alpha3.PodGroupTemplate{{Name: "mpi", SchedulingPolicy: policy, PriorityClassName: tc.pc}},
				}},
				&schedulingv1alpha3.PodGroup{ObjectMeta: meta(job), Spec: schedulingv1alpha3.PodGroupSpec{
					WorkloadRef:       &schedulingv1alpha3.WorkloadReference{WorkloadName: "pi", TemplateName: "mpi"},
					SchedulingPolicy:  policy,
					PriorityClassName: tc.pc,
				}},
			}
			if diff := cmp.Diff(want, native{}.Groups(job, priorities)); diff != "" {
				t.Errorf("Workload and PodGroup (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecorate(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Obj()
	template := func() *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
			Spec:       corev1.PodSpec{SchedulerName: "users-own"},
		}
	}
	cases := map[string]struct {
		s    Scheduler
		want *corev1.PodTemplateSpec
	}{
		"volcano: scheduler and group annotation": {s: volcano{}, want: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d", "scheduling.k8s.io/group-name": "pi"}},
			Spec:       corev1.PodSpec{SchedulerName: "volcano"},
		}},
		"scheduler-plugins: scheduler and group label": {s: schedulerPlugins{schedulerName: "sp"}, want: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b", "scheduling.x-k8s.io/pod-group": "pi"}, Annotations: map[string]string{"c": "d"}},
			Spec:       corev1.PodSpec{SchedulerName: "sp"},
		}},
		"kubernetes: schedulingGroup, the scheduler kept": {s: native{}, want: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
			Spec:       corev1.PodSpec{SchedulerName: "users-own", SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To("pi")}},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := template()
			tc.s.Decorate(got, job)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("template (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	small := testjob.MakeMPIJob("pi", "ns").Workers(2).Defaulted()
	large := testjob.MakeMPIJob("pi", "ns").Workers(5).Defaulted()
	cases := map[string]struct {
		s           Scheduler
		have, want  *kubeflow.MPIJob
		stripLabels bool
		update      bool
	}{
		"volcano: same":                        {s: volcano{}, have: small, want: small},
		"volcano: scaled":                      {s: volcano{}, have: small, want: large, update: true},
		"volcano: labels missing":              {s: volcano{}, have: small, want: small, stripLabels: true, update: true},
		"scheduler-plugins: same":              {s: schedulerPlugins{}, have: small, want: small},
		"scheduler-plugins: scaled":            {s: schedulerPlugins{}, have: small, want: large, update: true},
		"kubernetes: same":                     {s: native{}, have: small, want: small},
		"kubernetes: scaled, the spec is kept": {s: native{}, have: small, want: large},
		"kubernetes: labels missing":           {s: native{}, have: small, want: small, stripLabels: true, update: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			haves, wants := tc.s.Groups(tc.have, nil), tc.s.Groups(tc.want, nil)
			for i := range haves {
				if tc.stripLabels {
					haves[i].SetLabels(nil)
				}
				if pg, ok := haves[i].(*volcanov1beta1.PodGroup); ok && pg.Spec.Queue == "" {
					pg.Spec.Queue = "default" // as the API server stores it
				}
				before := haves[i].DeepCopyObject()
				if got := tc.s.Merge(haves[i], wants[i]); got != tc.update {
					t.Fatalf("Merge(%T) = %t, want %t", haves[i], got, tc.update)
				}
				if !tc.update {
					if diff := cmp.Diff(before, haves[i]); diff != "" {
						t.Errorf("Merge(%T) changed the object though it reported no change (-before +after):\n%s", haves[i], diff)
					}
					continue
				}
				if got := tc.s.Merge(haves[i], wants[i]); got {
					t.Errorf("after Merge, Merge(%T) = true, want false", haves[i])
				}
			}
		})
	}
}
