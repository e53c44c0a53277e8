package gang

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/gang"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// TestVolcanoPodGroupFollowsTheJob: the PodGroup exists with the job's
// Pods in it, follows a scale, is deleted while the job is suspended and
// made again on resume, and is deleted with the Pods when the finished
// job's cleanPodPolicy says so.
func TestVolcanoPodGroupFollowsTheJob(t *testing.T) {
	job := testjob.MakeMPIJob("follow", ours[gang.Volcano]).Workers(2).CleanPodPolicy(kubeflow.CleanPodPolicyAll).
		Requests(kubeflow.MPIReplicaTypeWorker, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}).Obj()
	if err := k8s.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	pg := named(&volcanov1beta1.PodGroup{}, job, "follow")
	minMember := func(want int32) {
		t.Helper()
		eventually(t, fmt.Sprintf("PodGroup minMember %d", want), func(ctx context.Context) (bool, error) {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(pg), pg)
			return err == nil && pg.Spec.MinMember == want, fmt.Errorf("minMember %d: %w", pg.Spec.MinMember, err)
		})
	}
	minMember(3)
	if !metav1.IsControlledBy(pg, job) {
		t.Errorf("PodGroup owner references %v, want the MPIJob as controller", pg.OwnerReferences)
	}
	for _, w := range []string{"follow-worker-0", "follow-worker-1"} {
		p := named(&corev1.Pod{}, job, w)
		get(t, p)
		if p.Spec.SchedulerName != "volcano" || p.Annotations[volcanov1beta1.KubeGroupNameAnnotationKey] != "follow" {
			t.Errorf("%s: schedulerName %q, annotations %v; want volcano and its group", w, p.Spec.SchedulerName, p.Annotations)
		}
	}
	l := named(&batchv1.Job{}, job, "follow-launcher")
	get(t, l)
	if tmpl := l.Spec.Template; tmpl.Spec.SchedulerName != "volcano" || tmpl.Annotations[volcanov1beta1.KubeGroupNameAnnotationKey] != "follow" {
		t.Errorf("launcher template: schedulerName %q, annotations %v; want volcano and its group", tmpl.Spec.SchedulerName, tmpl.Annotations)
	}

	updateJob(t, job, func(j *kubeflow.MPIJob) {
		j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Replicas = ptr.To[int32](3)
	})
	minMember(4)
	if want := resource.MustParse("3"); !pg.Spec.MinResources.Cpu().Equal(want) {
		t.Errorf("minResources cpu %v after the scale, want %v", pg.Spec.MinResources.Cpu(), want)
	}

	updateJob(t, job, func(j *kubeflow.MPIJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) })
	gone(t, pg)
	updateJob(t, job, func(j *kubeflow.MPIJob) { j.Spec.RunPolicy.Suspend = ptr.To(false) })
	minMember(4)

	finishLauncher(t, job)
	gone(t, named(&volcanov1beta1.PodGroup{}, job, "follow"))
}

// TestWaitForWorkersReadyGangCanForm: with WaitForWorkersReady the launcher
// Pod only exists once the workers are Ready, so the gang is the workers
// (upstream asks for workers + 1 and waits forever, #608). Once they are
// Ready the launcher comes, in the same group.
func TestWaitForWorkersReadyGangCanForm(t *testing.T) {
	cases := map[string]struct {
		mode      string
		groupSize func(ctx context.Context, job *kubeflow.MPIJob) (int32, error)
		inGroup   func(tmpl *corev1.PodTemplateSpec) bool
	}{
		"volcano": {
			mode: gang.Volcano,
			groupSize: func(ctx context.Context, job *kubeflow.MPIJob) (int32, error) {
				pg := named(&volcanov1beta1.PodGroup{}, job, job.Name)
				err := k8s.Get(ctx, client.ObjectKeyFromObject(pg), pg)
				return pg.Spec.MinMember, err
			},
			inGroup: func(tmpl *corev1.PodTemplateSpec) bool {
				return tmpl.Annotations[volcanov1beta1.KubeGroupNameAnnotationKey] == "wait"
			},
		},
		"scheduler-plugins": {
			mode: gang.SchedulerPlugins,
			groupSize: func(ctx context.Context, job *kubeflow.MPIJob) (int32, error) {
				pg := named(&schedv1alpha1.PodGroup{}, job, job.Name)
				err := k8s.Get(ctx, client.ObjectKeyFromObject(pg), pg)
				return pg.Spec.MinMember, err
			},
			inGroup: func(tmpl *corev1.PodTemplateSpec) bool { return tmpl.Labels[schedv1alpha1.PodGroupLabel] == "wait" },
		},
		"kubernetes": {
			mode: gang.Kubernetes,
			groupSize: func(ctx context.Context, job *kubeflow.MPIJob) (int32, error) {
				pg := named(&schedulingv1alpha3.PodGroup{}, job, job.Name)
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(pg), pg); err != nil {
					return 0, err
				}
				return pg.Spec.SchedulingPolicy.Gang.MinCount, nil
			},
			inGroup: func(tmpl *corev1.PodTemplateSpec) bool {
				return tmpl.Spec.SchedulingGroup != nil && ptr.Deref(tmpl.Spec.SchedulingGroup.PodGroupName, "") == "wait"
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := testjob.MakeMPIJob("wait", ours[tc.mode]).Workers(3).WaitForWorkers().Obj()
			if err := k8s.Create(context.Background(), job); err != nil {
				t.Fatal(err)
			}
			eventually(t, "a gang of the 3 workers", func(ctx context.Context) (bool, error) {
				n, err := tc.groupSize(ctx, job)
				return err == nil && n == 3, fmt.Errorf("gang of %d: %w", n, err)
			})
			for _, p := range readyWorkers(t, job, 3) {
				if !tc.inGroup(&corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec}) {
					t.Errorf("worker %s is not in the group: %v %v", p.Name, p.Labels, p.Annotations)
				}
			}
			l := named(&batchv1.Job{}, job, "wait-launcher")
			get(t, l)
			if !tc.inGroup(&l.Spec.Template) {
				t.Errorf("launcher template is not in the group: %+v", l.Spec.Template.ObjectMeta)
			}
		})
	}
}

// TestKubernetesWorkloadAPI: the job gets a Workload describing its gang
// and the PodGroup that its Pods name in spec.schedulingGroup. Their specs
// are immutable and the PodGroup lives as long as a Pod names it, so a
// scale keeps them; a suspend deletes them and the resume makes them anew,
// with the new size.
func TestKubernetesWorkloadAPI(t *testing.T) {
	job := testjob.MakeMPIJob("native", ours[gang.Kubernetes]).Workers(2).
		SchedulingPolicy(kubeflow.SchedulingPolicy{PriorityClass: "gang-high"}).Obj()
	if err := k8s.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	wl := named(&schedulingv1alpha3.Workload{}, job, "native")
	get(t, wl)
	pg := named(&schedulingv1alpha3.PodGroup{}, job, "native")
	get(t, pg)
	gangOf := func(n int32) schedulingv1alpha3.PodGroupSchedulingPolicy {
		return schedulingv1alpha3.PodGroupSchedulingPolicy{Gang: &schedulingv1alpha3.GangSchedulingPolicy{MinCount: n}}
	}
	wantWorkload := schedulingv1alpha3.WorkloadSpec{
		ControllerRef:     &schedulingv1alpha3.TypedLocalObjectReference{APIGroup: "kubeflow.org", Kind: "MPIJob", Name: "native"},
		PodGroupTemplates: []schedulingv1alpha3.PodGroupTemplate{{Name: "mpi", SchedulingPolicy: gangOf(3), PriorityClassName: "gang-high"}},
	}
	if diff := cmp.Diff(wantWorkload, wl.Spec); diff != "" {
		t.Errorf("Workload spec (-want +got):\n%s", diff)
	}
	wantPodGroup := schedulingv1alpha3.PodGroupSpec{
		WorkloadRef:       &schedulingv1alpha3.WorkloadReference{WorkloadName: "native", TemplateName: "mpi"},
		SchedulingPolicy:  gangOf(3),
		PriorityClassName: "gang-high",
		// Filled in by the API server.
		Priority:       ptr.To[int32](1000),
		DisruptionMode: &schedulingv1alpha3.DisruptionMode{Single: &schedulingv1alpha3.SingleDisruptionMode{}},
	}
	if diff := cmp.Diff(wantPodGroup, pg.Spec); diff != "" {
		t.Errorf("PodGroup spec (-want +got):\n%s", diff)
	}
	for _, w := range []string{"native-worker-0", "native-worker-1"} {
		p := named(&corev1.Pod{}, job, w)
		get(t, p)
		if diff := cmp.Diff(&corev1.PodSchedulingGroup{PodGroupName: ptr.To("native")}, p.Spec.SchedulingGroup); diff != "" {
			t.Errorf("%s schedulingGroup (-want +got):\n%s", w, diff)
		}
	}
	l := named(&batchv1.Job{}, job, "native-launcher")
	get(t, l)
	if diff := cmp.Diff(&corev1.PodSchedulingGroup{PodGroupName: ptr.To("native")}, l.Spec.Template.Spec.SchedulingGroup); diff != "" {
		t.Errorf("launcher template schedulingGroup (-want +got):\n%s", diff)
	}

	oldUID := pg.UID
	updateJob(t, job, func(j *kubeflow.MPIJob) {
		j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Replicas = ptr.To[int32](4)
	})
	get(t, named(&corev1.Pod{}, job, "native-worker-3"))
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pg), pg); err != nil || pg.UID != oldUID || pg.DeletionTimestamp != nil {
		t.Fatalf("after a scale the PodGroup changed (uid %s -> %s, deleting %v, err %v); it cannot while Pods name it", oldUID, pg.UID, pg.DeletionTimestamp, err)
	}

	updateJob(t, job, func(j *kubeflow.MPIJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) })
	gone(t, wl)
	releasePodGroup(t, job)
	updateJob(t, job, func(j *kubeflow.MPIJob) { j.Spec.RunPolicy.Suspend = ptr.To(false) })
	eventually(t, "a new PodGroup of 5", func(ctx context.Context) (bool, error) {
		fresh := named(&schedulingv1alpha3.PodGroup{}, job, "native")
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(fresh), fresh); err != nil {
			return false, err
		}
		return fresh.UID != oldUID && fresh.Spec.SchedulingPolicy.Gang.MinCount == 5, fmt.Errorf("new %t, policy %+v", fresh.UID != oldUID, fresh.Spec.SchedulingPolicy.Gang)
	})
	eventually(t, "a Workload of 5", func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(wl), wl)
		return err == nil && wl.Spec.PodGroupTemplates[0].SchedulingPolicy.Gang.MinCount == 5, err
	})
	get(t, named(&corev1.Pod{}, job, "native-worker-3"))
}

// releasePodGroup plays kube-controller-manager's PodGroupProtection
// controller: once no Pod of the job is left, the deleted PodGroup's
// finalizer goes and the PodGroup with it.
func releasePodGroup(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	eventually(t, "the job's Pods gone", func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		err := k8s.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{kubeflow.LabelJobName: job.Name})
		return err == nil && len(pods.Items) == 0, fmt.Errorf("%d Pods: %w", len(pods.Items), err)
	})
	pg := named(&schedulingv1alpha3.PodGroup{}, job, job.Name)
	eventually(t, "the PodGroup released", func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pg), pg); err != nil {
			return false, err
		}
		if pg.DeletionTimestamp == nil {
			return false, fmt.Errorf("PodGroup not deleted")
		}
		pg.Finalizers = nil
		err := k8s.Update(ctx, pg)
		return err == nil, err
	})
	gone(t, pg)
}

// TestAdoptsGroupObjectsMadeWithoutOurLabels: a group object the job
// controls but that lacks our labels, as upstream's operator makes its
// PodGroups (an operator swap mid-job), is adopted: our cache does not see
// it, so the create answers AlreadyExists, the object is read past the
// cache and given our labels (a patch), then brought to the job's spec (an
// update). Kubernetes' Workload API objects go the same way; their spec is
// immutable, so they must be made as the job wants.
func TestAdoptsGroupObjectsMadeWithoutOurLabels(t *testing.T) {
	owned := func(job *kubeflow.MPIJob, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: job.Name, Namespace: job.Namespace, Labels: labels, OwnerReferences: []metav1.OwnerReference{
			*metav1.NewControllerRef(job, kubeflow.GroupVersion.WithKind(kubeflow.Kind)),
		}}
	}
	gangOf3 := schedulingv1alpha3.PodGroupSchedulingPolicy{Gang: &schedulingv1alpha3.GangSchedulingPolicy{MinCount: 3}}
	native := func(job *kubeflow.MPIJob, labels map[string]string) []client.Object {
		return []client.Object{
			&schedulingv1alpha3.Workload{ObjectMeta: owned(job, labels), Spec: schedulingv1alpha3.WorkloadSpec{
				ControllerRef:     &schedulingv1alpha3.TypedLocalObjectReference{APIGroup: "kubeflow.org", Kind: "MPIJob", Name: job.Name},
				PodGroupTemplates: []schedulingv1alpha3.PodGroupTemplate{{Name: "mpi", SchedulingPolicy: gangOf3}},
			}},
			&schedulingv1alpha3.PodGroup{ObjectMeta: owned(job, labels), Spec: schedulingv1alpha3.PodGroupSpec{
				WorkloadRef:      &schedulingv1alpha3.WorkloadReference{WorkloadName: job.Name, TemplateName: "mpi"},
				SchedulingPolicy: gangOf3,
			}},
		}
	}
	cases := map[string]struct {
		mode string
		// theirs are the objects made before our operator acts.
		theirs func(job *kubeflow.MPIJob) []client.Object
		// minMember reads the gang's size from a group object, -1 if
		// it has none to bring to the job's.
		minMember func(client.Object) int32
	}{
		"volcano, upstream's": {
			mode: gang.Volcano,
			theirs: func(job *kubeflow.MPIJob) []client.Object {
				return []client.Object{&volcanov1beta1.PodGroup{ObjectMeta: owned(job, nil), Spec: volcanov1beta1.PodGroupSpec{MinMember: 99}}}
			},
			minMember: func(o client.Object) int32 { return o.(*volcanov1beta1.PodGroup).Spec.MinMember },
		},
		"scheduler-plugins, upstream's": {
			mode: gang.SchedulerPlugins,
			theirs: func(job *kubeflow.MPIJob) []client.Object {
				return []client.Object{&schedv1alpha1.PodGroup{ObjectMeta: owned(job, nil), Spec: schedv1alpha1.PodGroupSpec{MinMember: 99}}}
			},
			minMember: func(o client.Object) int32 { return o.(*schedv1alpha1.PodGroup).Spec.MinMember },
		},
		"kubernetes": {
			mode:      gang.Kubernetes,
			theirs:    func(job *kubeflow.MPIJob) []client.Object { return native(job, nil) },
			minMember: func(client.Object) int32 { return -1 },
		},
	}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			job := testjob.MakeMPIJob(fmt.Sprintf("adopt%d", i), ours[tc.mode]).Workers(2).Suspend(true).Obj()
			if err := k8s.Create(ctx, job); err != nil {
				t.Fatal(err)
			}
			theirs := tc.theirs(job)
			for _, obj := range theirs {
				if err := k8s.Create(ctx, obj); err != nil {
					t.Fatal(err)
				}
			}
			updateJob(t, job, func(j *kubeflow.MPIJob) { j.Spec.RunPolicy.Suspend = ptr.To(false) })
			for _, obj := range theirs {
				uid := obj.GetUID()
				eventually(t, fmt.Sprintf("the %T adopted", obj), func(ctx context.Context) (bool, error) {
					if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
						return false, err
					}
					labels := obj.GetLabels()
					size := tc.minMember(obj)
					return obj.GetUID() == uid && labels[kubeflow.LabelOperatorName] == kubeflow.OperatorName &&
							labels[kubeflow.LabelJobName] == job.Name && (size == -1 || size == 3),
						fmt.Errorf("same %t, labels %v, minMember %d", obj.GetUID() == uid, labels, size)
				})
			}
			// The adopted objects are the job's own: a suspend deletes
			// them (a Workload API PodGroup waits for its Pods, whose
			// release no controller plays here, so only the others).
			if tc.mode != gang.Kubernetes {
				updateJob(t, job, func(j *kubeflow.MPIJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) })
				gone(t, theirs[0])
			}
		})
	}
}

// TestGroupLabelsRemovedByHandComeBack: our labels are how the operator's
// cache sees a group object; one taken off by hand is put back (an update)
// on the same object at the job's next reconcile (here a scale: a change
// of a group object alone triggers none), in every mode.
func TestGroupLabelsRemovedByHandComeBack(t *testing.T) {
	kinds := map[string][]client.Object{
		gang.Volcano:          {&volcanov1beta1.PodGroup{}},
		gang.SchedulerPlugins: {&schedv1alpha1.PodGroup{}},
		gang.Kubernetes:       {&schedulingv1alpha3.Workload{}, &schedulingv1alpha3.PodGroup{}},
	}
	for mode, objs := range kinds {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			job := testjob.MakeMPIJob("relabel", ours[mode]).Workers(1).Obj()
			if err := k8s.Create(ctx, job); err != nil {
				t.Fatal(err)
			}
			uids := map[client.Object]types.UID{}
			for _, obj := range objs {
				obj = named(obj, job, job.Name)
				get(t, obj)
				eventually(t, fmt.Sprintf("the job-name label off the %T", obj), func(ctx context.Context) (bool, error) {
					if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
						return false, err
					}
					labels := obj.GetLabels()
					delete(labels, kubeflow.LabelJobName)
					obj.SetLabels(labels)
					err := k8s.Update(ctx, obj)
					return err == nil, err
				})
				uids[obj] = obj.GetUID()
			}
			updateJob(t, job, func(j *kubeflow.MPIJob) {
				j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Replicas = ptr.To[int32](2)
			})
			for obj, uid := range uids {
				eventually(t, fmt.Sprintf("the job-name label back on the %T", obj), func(ctx context.Context) (bool, error) {
					if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
						return false, err
					}
					return obj.GetUID() == uid && obj.GetLabels()[kubeflow.LabelJobName] == job.Name,
						fmt.Errorf("same %t, labels %v", obj.GetUID() == uid, obj.GetLabels())
				})
			}
		})
	}
}
