package builder

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func TestLauncherJobIsTheTemplateWithTheJobsAdditions(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").Workers(2).Slots(2).BackoffLimit(3))
	tpl := launcherTemplate(job)
	tpl.Labels = map[string]string{"app": "pi", labelReplicaType: "user-value"}
	tpl.Annotations = map[string]string{"example.com/note": "kept"}
	tpl.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "FOO", Value: "bar"}}

	want := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "pi-launcher",
			Namespace:       "ns",
			Labels:          roleLabels("pi", "launcher"),
			OwnerReferences: ownerRefs(job),
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](3),
			Suspend:      ptr.To(false),
			// Never two launcher Pods at once (kubernetes#115844).
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels: map[string]string{
						"app":             "pi",
						labelJobName:      "pi",
						labelOperatorName: "mpi-operator",
						labelJobRole:      "launcher",
						labelReplicaType:  "launcher",
					},
					Annotations: map[string]string{"example.com/note": "kept"},
				},
				Spec: corev1.PodSpec{
					Hostname:                     "pi-launcher",
					Subdomain:                    "pi",
					DNSConfig:                    &corev1.PodDNSConfig{Searches: []string{"pi.ns.svc." + testDomain}},
					RestartPolicy:                corev1.RestartPolicyOnFailure,
					AutomountServiceAccountToken: ptr.To(false),
					Volumes:                      []corev1.Volume{sshVolume("pi", 0o600), configVolume("pi")},
					Containers: []corev1.Container{{
						Name:  "launcher",
						Image: "mpi",
						Command: []string{"sh", "-c", waitForWorkersScript + "\nexec \"$@\"", "wait-for-workers",
							"mpirun", "-n", "1", "hostname"},
						Env: []corev1.EnvVar{
							{Name: "K_MPI_JOB_ROLE", Value: "launcher"},
							{Name: "OMPI_MCA_orte_default_hostfile", Value: "/etc/mpi/hostfile"},
							{Name: "OMPI_MCA_orte_keep_fqdn_hostnames", Value: "true"},
							{Name: "OMPI_MCA_orte_set_default_slots", Value: "2"},
							{Name: "OMPI_MCA_plm_rsh_args", Value: testSSHArgs},
							{Name: "PRTE_MCA_prte_default_hostfile", Value: "/etc/mpi/hostfile"},
							{Name: "PRTE_MCA_prte_keep_fqdn_hostnames", Value: "true"},
							{Name: "PRTE_MCA_prte_set_default_slots", Value: "2"},
							{Name: "PRTE_MCA_plm_ssh_args", Value: testSSHArgs},
							{Name: "NVIDIA_VISIBLE_DEVICES"},
							{Name: "NVIDIA_DRIVER_CAPABILITIES"},
							{Name: "FOO", Value: "bar"},
						},
						VolumeMounts: []corev1.VolumeMount{sshMount("/root/.ssh"), configMount},
					}},
				},
			},
		},
	}
	got := LauncherJob(job, false, testOpts)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LauncherJob (-want +got):\n%s", diff)
	}
}

func TestLauncherEnvPerImplementation(t *testing.T) {
	role := corev1.EnvVar{Name: "K_MPI_JOB_ROLE", Value: "launcher"}
	noGPU := []corev1.EnvVar{{Name: "NVIDIA_VISIBLE_DEVICES"}, {Name: "NVIDIA_DRIVER_CAPABILITIES"}}
	openMPI := func(slots string) []corev1.EnvVar {
		return []corev1.EnvVar{
			{Name: "OMPI_MCA_orte_default_hostfile", Value: "/etc/mpi/hostfile"},
			{Name: "OMPI_MCA_orte_keep_fqdn_hostnames", Value: "true"},
			{Name: "OMPI_MCA_orte_set_default_slots", Value: slots},
			{Name: "OMPI_MCA_plm_rsh_args", Value: testSSHArgs},
			{Name: "PRTE_MCA_prte_default_hostfile", Value: "/etc/mpi/hostfile"},
			{Name: "PRTE_MCA_prte_keep_fqdn_hostnames", Value: "true"},
			{Name: "PRTE_MCA_prte_set_default_slots", Value: slots},
			{Name: "PRTE_MCA_plm_ssh_args", Value: testSSHArgs},
		}
	}
	intel := func(slots string) []corev1.EnvVar {
		return []corev1.EnvVar{
			{Name: "I_MPI_HYDRA_HOST_FILE", Value: "/etc/mpi/hostfile"},
			{Name: "I_MPI_PERHOST", Value: slots},
			{Name: "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", Value: testSSHArgs},
		}
	}
	mpich := []corev1.EnvVar{
		{Name: "HYDRA_HOST_FILE", Value: "/etc/mpi/hostfile"},
		{Name: "HYDRA_LAUNCH_EXTRA_ARGS", Value: testSSHArgs},
		{Name: "HYDRA_LAUNCHER_EXTRA_ARGS", Value: testSSHArgs},
	}
	concat := func(parts ...[]corev1.EnvVar) []corev1.EnvVar {
		out := []corev1.EnvVar{role}
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}

	cases := map[string]struct {
		job  *testjob.Wrapper
		want []corev1.EnvVar
	}{
		"OpenMPI gets both ORTE and PRRTE names and hides GPUs": {
			job:  testjob.MakeMPIJob("pi", "ns").Slots(4),
			want: concat(openMPI("4"), noGPU),
		},
		"OpenMPI launcher running ranks keeps the GPUs": {
			job:  testjob.MakeMPIJob("pi", "ns").Slots(4).LauncherAsWorker(),
			want: concat(openMPI("4")),
		},
		"Intel MPI gets hydra's host file, ranks per host and ssh args": {
			job:  testjob.MakeMPIJob("pi", "ns").Slots(3).Implementation(kubeflow.MPIImplementationIntel),
			want: concat(intel("3"), noGPU),
		},
		"Intel MPI launcher running ranks keeps the GPUs": {
			job:  testjob.MakeMPIJob("pi", "ns").Slots(1).Implementation(kubeflow.MPIImplementationIntel).LauncherAsWorker(),
			want: concat(intel("1")),
		},
		"MPICH gets hydra's host file and ssh args": {
			job:  testjob.MakeMPIJob("pi", "ns").Slots(2).Implementation(kubeflow.MPIImplementationMPICH),
			want: concat(mpich, noGPU),
		},
		"MPICH launcher running ranks keeps the GPUs": {
			job:  testjob.MakeMPIJob("pi", "ns").Implementation(kubeflow.MPIImplementationMPICH).LauncherAsWorker(),
			want: concat(mpich),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := LauncherJob(defaulted(tc.job), false, testOpts).Spec.Template.Spec.Containers[0].Env
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("launcher env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLauncherUserEnvComesLastSoItWins(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").Implementation(kubeflow.MPIImplementationMPICH))
	launcherTemplate(job).Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "HYDRA_HOST_FILE", Value: "/my/hosts"},
		{Name: "NVIDIA_VISIBLE_DEVICES", Value: "all"},
	}
	want := []corev1.EnvVar{
		{Name: "K_MPI_JOB_ROLE", Value: "launcher"},
		{Name: "HYDRA_HOST_FILE", Value: "/etc/mpi/hostfile"},
		{Name: "HYDRA_LAUNCH_EXTRA_ARGS", Value: testSSHArgs},
		{Name: "HYDRA_LAUNCHER_EXTRA_ARGS", Value: testSSHArgs},
		{Name: "NVIDIA_VISIBLE_DEVICES"},
		{Name: "NVIDIA_DRIVER_CAPABILITIES"},
		{Name: "HYDRA_HOST_FILE", Value: "/my/hosts"},
		{Name: "NVIDIA_VISIBLE_DEVICES", Value: "all"},
	}
	got := LauncherJob(job, false, testOpts).Spec.Template.Spec.Containers[0].Env
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("launcher env (-want +got):\n%s", diff)
	}
}

func TestLauncherEveryContainerGetsRoleAndConfigButOnlyTheFirstTheKeys(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").LauncherAsWorker())
	launcherTemplate(job).Spec.Containers = append(launcherTemplate(job).Spec.Containers,
		corev1.Container{Name: "sidecar", Image: "busybox"})
	want := corev1.Container{
		Name:  "sidecar",
		Image: "busybox",
		Env: []corev1.EnvVar{
			{Name: "K_MPI_JOB_ROLE", Value: "launcher"},
			{Name: "OMPI_MCA_orte_default_hostfile", Value: "/etc/mpi/hostfile"},
			{Name: "OMPI_MCA_orte_keep_fqdn_hostnames", Value: "true"},
			{Name: "OMPI_MCA_orte_set_default_slots", Value: "1"},
			{Name: "OMPI_MCA_plm_rsh_args", Value: testSSHArgs},
			{Name: "PRTE_MCA_prte_default_hostfile", Value: "/etc/mpi/hostfile"},
			{Name: "PRTE_MCA_prte_keep_fqdn_hostnames", Value: "true"},
			{Name: "PRTE_MCA_prte_set_default_slots", Value: "1"},
			{Name: "PRTE_MCA_plm_ssh_args", Value: testSSHArgs},
		},
		VolumeMounts: []corev1.VolumeMount{configMount},
	}
	spec := LauncherJob(job, false, testOpts).Spec.Template.Spec
	if len(spec.Containers) != 2 {
		t.Fatalf("got %d containers, want 2", len(spec.Containers))
	}
	if diff := cmp.Diff(want, spec.Containers[1]); diff != "" {
		t.Errorf("sidecar (-want +got):\n%s", diff)
	}
	if got := spec.Containers[0].Command; len(got) < 4 || !cmp.Equal(got[4:], []string{"mpirun", "-n", "1", "hostname"}) {
		t.Errorf("launcher command = %q, want the template's after the wait for the workers", got)
	}
	if got := spec.Containers[1].Command; got != nil {
		t.Errorf("sidecar command = %q, want none (sshd is only for workers)", got)
	}
}

func TestLauncherRestartAndFailurePolicy(t *testing.T) {
	ignoreDisruption := batchv1.PodFailurePolicyRule{
		Action: batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{
			Type: "DisruptionTarget", Status: corev1.ConditionTrue,
		}},
	}
	permanent := make([]int32, 0, 127)
	for c := int32(1); c <= 127; c++ {
		permanent = append(permanent, c)
	}
	cases := map[string]struct {
		policy      kubeflow.RestartPolicy // empty: the default
		wantRestart corev1.RestartPolicy
		wantPolicy  *batchv1.PodFailurePolicy
	}{
		"default OnFailure: kubelet restarts, no failure policy": {
			wantRestart: corev1.RestartPolicyOnFailure,
		},
		"OnFailure: kubelet restarts, no failure policy": {
			policy:      kubeflow.RestartPolicyOnFailure,
			wantRestart: corev1.RestartPolicyOnFailure,
		},
		"Never: disruptions do not count against backoffLimit": {
			policy:      kubeflow.RestartPolicyNever,
			wantRestart: corev1.RestartPolicyNever,
			wantPolicy:  &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{ignoreDisruption}},
		},
		"ExitCode: Never, disruptions ignored, exit codes 1-127 fail the job": {
			policy:      kubeflow.RestartPolicyExitCode,
			wantRestart: corev1.RestartPolicyNever,
			wantPolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				ignoreDisruption,
				{
					Action: batchv1.PodFailurePolicyActionFailJob,
					OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
						Operator: batchv1.PodFailurePolicyOnExitCodesOpIn,
						Values:   permanent,
					},
				},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := testjob.MakeMPIJob("pi", "ns")
			if tc.policy != "" {
				w.LauncherRestartPolicy(tc.policy)
			}
			got := LauncherJob(defaulted(w), false, testOpts)
			if r := got.Spec.Template.Spec.RestartPolicy; r != tc.wantRestart {
				t.Errorf("restartPolicy = %q, want %q", r, tc.wantRestart)
			}
			if diff := cmp.Diff(tc.wantPolicy, got.Spec.PodFailurePolicy); diff != "" {
				t.Errorf("podFailurePolicy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLauncherExitCodesAreThoseKubernetesAccepts(t *testing.T) {
	// The API server refuses 0 with operator In, more than 255 values, and
	// values that are not strictly increasing.
	job := defaulted(testjob.MakeMPIJob("pi", "ns").LauncherRestartPolicy(kubeflow.RestartPolicyExitCode))
	pfp := LauncherJob(job, false, testOpts).Spec.PodFailurePolicy
	if pfp == nil {
		t.Fatal("no podFailurePolicy")
	}
	for _, r := range pfp.Rules {
		if r.OnExitCodes == nil {
			continue
		}
		v := r.OnExitCodes.Values
		if len(v) == 0 || len(v) > 255 {
			t.Errorf("%d exit codes, want 1..255", len(v))
		}
		for i, c := range v {
			if c == 0 && r.OnExitCodes.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn {
				t.Error("exit code 0 with operator In")
			}
			if i > 0 && c <= v[i-1] {
				t.Errorf("exit codes not strictly increasing at %d: %d after %d", i, c, v[i-1])
			}
		}
	}
}

func TestLauncherJobSpecFromRunPolicy(t *testing.T) {
	cases := map[string]struct {
		job         *testjob.Wrapper
		suspend     bool
		wantBackoff *int32
	}{
		"backoffLimit unset stays unset for the Job default": {
			job: testjob.MakeMPIJob("pi", "ns"),
		},
		"backoffLimit 0 is copied": {
			job:         testjob.MakeMPIJob("pi", "ns").BackoffLimit(0),
			wantBackoff: ptr.To[int32](0),
		},
		"backoffLimit 5 is copied": {
			job:         testjob.MakeMPIJob("pi", "ns").BackoffLimit(5),
			wantBackoff: ptr.To[int32](5),
		},
		"suspend true is passed through": {
			job:     testjob.MakeMPIJob("pi", "ns"),
			suspend: true,
		},
		"suspend comes from the argument, not from the MPIJob": {
			job:     testjob.MakeMPIJob("pi", "ns").Suspend(true),
			suspend: false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := LauncherJob(defaulted(tc.job), tc.suspend, testOpts)
			if diff := cmp.Diff(tc.wantBackoff, got.Spec.BackoffLimit); diff != "" {
				t.Errorf("backoffLimit (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(ptr.To(tc.suspend), got.Spec.Suspend); diff != "" {
				t.Errorf("suspend (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLauncherServiceAccountToken(t *testing.T) {
	cases := map[string]struct {
		template *bool
		want     *bool
	}{
		"unset in the template: no token":     {template: nil, want: ptr.To(false)},
		"explicit true in the template kept":  {template: ptr.To(true), want: ptr.To(true)},
		"explicit false in the template kept": {template: ptr.To(false), want: ptr.To(false)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := defaulted(testjob.MakeMPIJob("pi", "ns"))
			launcherTemplate(job).Spec.AutomountServiceAccountToken = tc.template
			got := LauncherJob(job, false, testOpts).Spec.Template.Spec.AutomountServiceAccountToken
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("automountServiceAccountToken (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLauncherHostnameAndSubdomain(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("train", "team-a"))
	got := LauncherJob(job, false, testOpts)
	if got.Name != "train-launcher" || got.Namespace != "team-a" {
		t.Errorf("Job %s/%s, want team-a/train-launcher", got.Namespace, got.Name)
	}
	spec := got.Spec.Template.Spec
	if spec.Hostname != "train-launcher" || spec.Subdomain != "train" {
		t.Errorf("hostname %q subdomain %q, want train-launcher and train", spec.Hostname, spec.Subdomain)
	}
	if v := findVolume(&spec, "mpi-job-config"); v == nil {
		t.Error("no mpi-job-config volume")
	} else if diff := cmp.Diff(configVolume("train"), *v); diff != "" {
		t.Errorf("config volume (-want +got):\n%s", diff)
	}
}

// At startup the launcher waits for its workers' names: in its own
// container when it names its command (no kubelet round trip between the
// wait and mpirun), else in an init container, as the operator cannot
// see an image's entrypoint to exec it.
func TestLauncherWaitsForWorkerNamesOnlyAtStartup(t *testing.T) {
	noCommand := testjob.MakeMPIJob("pi", "ns")
	noCommand.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template.Spec.Containers[0].Command = nil
	for name, tc := range map[string]struct {
		job                  *testjob.Wrapper
		inContainer, initCtr bool
	}{
		"AtStartup waits in the launcher's container":      {testjob.MakeMPIJob("pi", "ns"), true, false},
		"AtStartup without a command waits in an init one": {noCommand, false, true},
		"WaitForWorkersReady starts after the workers":     {testjob.MakeMPIJob("pi", "ns").WaitForWorkers(), false, false},
	} {
		t.Run(name, func(t *testing.T) {
			spec := LauncherJob(tc.job.Defaulted(), false, testOpts).Spec.Template.Spec
			init := len(spec.InitContainers) == 1 && spec.InitContainers[0].Name == "wait-for-workers"
			cmd := spec.Containers[0].Command
			inContainer := len(cmd) > 3 && cmd[0] == "sh" && strings.HasPrefix(cmd[2], waitForWorkersScript) && cmd[3] == "wait-for-workers"
			if init != tc.initCtr || inContainer != tc.inContainer {
				t.Errorf("init container %t, in the launcher's container %t; want %t, %t (command %q)", init, inContainer, tc.initCtr, tc.inContainer, cmd)
			}
		})
	}
}

// The wait in the launcher's container ends by running the user's
// command and arguments as given, spaces and quotes kept, with its exit
// code.
func TestWaitInTheLaunchersContainerExecsItsCommand(t *testing.T) {
	c := corev1.Container{Command: []string{"sh", "-c", `printf '%s|' "$@"; exit 3`, "prog"}, Args: []string{"a b", `"q"`, "$x"}}
	spec := corev1.PodSpec{Containers: []corev1.Container{c}}
	waitForWorkers(&spec, false)
	argv := append(slices.Clone(spec.Containers[0].Command), spec.Containers[0].Args...)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hostfile"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	argv[2] = strings.ReplaceAll(argv[2], HostfilePath, filepath.Join(dir, "hostfile"))
	if err := os.WriteFile(filepath.Join(dir, "published"), []byte("true"), 0o600); err != nil {
		t.Fatal(err)
	}
	argv[2] = strings.ReplaceAll(argv[2], publishedPath, filepath.Join(dir, "published"))
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("exit %v, want the command's 3", err)
	}
	if string(out) != `a b|"q"|$x|` {
		t.Errorf("the command got %q, want its arguments as given", out)
	}
}

func TestWaitForWorkersScriptReadsEveryHostfileSyntax(t *testing.T) {
	// The script strips what follows a host: " slots=N" (Open MPI) or ":N"
	// (MPICH, Intel). Run its sed expression on both.
	for _, impl := range []kubeflow.MPIImplementation{kubeflow.MPIImplementationOpenMPI, kubeflow.MPIImplementationMPICH} {
		job := testjob.MakeMPIJob("pi", "ns").Workers(2).Implementation(impl).Defaulted()
		hostfile := Hostfile(job, testOpts)
		cmd := exec.Command("sed", "-e", "s/[ :].*//")
		cmd.Stdin = strings.NewReader(hostfile)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		want := "pi-worker-0.pi.ns.svc." + testDomain + "\npi-worker-1.pi.ns.svc." + testDomain + "\n"
		if string(out) != want {
			t.Errorf("%s: hosts read from the hostfile = %q, want %q", impl, out, want)
		}
		if !strings.Contains(waitForWorkersScript, "sed -e 's/[ :].*//' /etc/mpi/hostfile") {
			t.Errorf("script no longer uses the tested expression: %s", waitForWorkersScript)
		}
	}
}

// runWaitForWorkers runs the script under sh over a hostfile of the given
// hosts, with a resolv.conf of the given search line (none if empty), the
// operator's word already given, and a getent that logs each query and
// answers as resolves says, given the name and how often it was asked
// before. It returns the output and the queries.
func runWaitForWorkers(t *testing.T, hosts []string, search string, resolves string) (string, []string) {
	t.Helper()
	w := waitRun{hosts: hosts, search: search, resolves: resolves, publishedAt: 0}
	return w.run(t)
}

// waitRun is one run of the script. The operator's word comes after
// publishedAt of the script's sleeps (0: before it starts; -1: never);
// sleep returns at once.
type waitRun struct {
	hosts            []string
	search, resolves string
	publishedAt      int
	// early is set by run: a name was asked for before the word came.
	early bool
}

func (w *waitRun) run(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	var hostfile strings.Builder
	for _, h := range w.hosts {
		hostfile.WriteString(h + " slots=1\n")
	}
	write := func(name, content string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	hostfilePath := write("hostfile", hostfile.String(), 0o600)
	resolvConf := filepath.Join(dir, "no-resolv.conf")
	if w.search != "" {
		resolvConf = write("resolv.conf", "nameserver 10.96.0.10\nsearch "+w.search+"\noptions ndots:5\n", 0o600)
	}
	published := write("published", "", 0o600)
	if w.publishedAt == 0 {
		write("published", "true", 0o600)
	}
	write("getent", `#!/bin/sh
d="$(dirname "$0")"
q="$d/queries"
[ -s "$d/published" ] || touch "$d/early"
asked=$(grep -cxF "$2" "$q" 2>/dev/null)
echo "$2" >> "$q"
`+w.resolves+`
`, 0o700)
	write("sleep", `#!/bin/sh
d="$(dirname "$0")"
c=$(( $(cat "$d/sleeps" 2>/dev/null || echo 0) + 1 ))
echo $c > "$d/sleeps"
[ $c -eq `+strconv.Itoa(w.publishedAt)+` ] && echo true > "$d/published"
exit 0
`, 0o700)
	script := strings.ReplaceAll(waitScript(true), HostfilePath, hostfilePath)
	script = strings.ReplaceAll(script, resolvConfPath, resolvConf)
	script = strings.ReplaceAll(script, hostnamePath, write("hostname", "pi-launcher\n", 0o600))
	script = strings.ReplaceAll(script, publishedPath, published)
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	queries, err := os.ReadFile(filepath.Join(dir, "queries"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(filepath.Join(dir, "early"))
	w.early = err == nil
	return string(out), strings.Fields(string(queries))
}

// No name is asked for before the operator's word: a cluster DNS that
// caches denials would answer NXDOMAIN for the TTL after the name is
// published. The word is waited for once, reported once.
func TestWaitForWorkersScriptAsksDNSOnlyOnceTheOperatorSaysSo(t *testing.T) {
	w := waitRun{hosts: []string{"w0.pi", "w1.pi"}, search: "ns.svc.cluster.local", resolves: "exit 0", publishedAt: 5}
	out, queries := w.run(t)
	if out != "waiting for the operator to publish the workers' names\n" {
		t.Errorf("output %q, want one line for the operator's word", out)
	}
	if w.early {
		t.Errorf("a name was asked for before the operator's word: %q", queries)
	}
	if want := []string{"w0.pi.ns.svc.cluster.local.", "w1.pi.ns.svc.cluster.local."}; !slices.Equal(queries, want) {
		t.Errorf("queries %q, want %q", queries, want)
	}
}

// Without the operator's word (an older operator leads) the wait asks DNS
// after a minute of looking, 600 times 0.1 s.
func TestWaitForWorkersScriptAsksDNSWithoutTheWordAfterAMinute(t *testing.T) {
	w := waitRun{hosts: []string{"w0.pi"}, search: "ns.svc.cluster.local", resolves: "exit 0", publishedAt: -1}
	out, queries := w.run(t)
	if out != "waiting for the operator to publish the workers' names\n" || !slices.Equal(queries, []string{"w0.pi.ns.svc.cluster.local."}) {
		t.Errorf("output %q, queries %q; want the wait reported and the name asked", out, queries)
	}
}

// Where the cluster's DNS caches denials (the operator's flag, or the
// job's annotation, which wins), the launcher's wait reads the operator's
// word through a downward API volume before it asks DNS; elsewhere it
// asks at once, with no volume.
func TestLauncherAsksDNSOnceToldWhereTheDNSCachesDenials(t *testing.T) {
	noCommand := testjob.MakeMPIJob("pi", "ns")
	noCommand.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template.Spec.Containers[0].Command = nil
	for name, tc := range map[string]struct {
		job        *testjob.Wrapper
		annotation string
		flag, told bool
	}{
		"the flag":                         {testjob.MakeMPIJob("pi", "ns"), "", true, true},
		"neither":                          {testjob.MakeMPIJob("pi", "ns"), "", false, false},
		"the job's annotation":             {testjob.MakeMPIJob("pi", "ns"), "true", false, true},
		"the job's annotation against it":  {testjob.MakeMPIJob("pi", "ns"), "false", true, false},
		"the flag, waiting in an init one": {noCommand, "", true, true},
	} {
		t.Run(name, func(t *testing.T) {
			job := tc.job.Defaulted()
			if tc.annotation != "" {
				job.Annotations = map[string]string{AnnotationDNSCachesDenials: tc.annotation}
			}
			opts := testOpts
			opts.DNSCachesDenials = tc.flag
			spec := LauncherJob(job, false, opts).Spec.Template.Spec
			c := spec.Containers[0]
			if len(spec.InitContainers) > 0 {
				c = spec.InitContainers[0]
			}
			script := c.Command[2]
			if got := strings.HasPrefix(script, waitForWordScript+waitForWorkersScript); got != tc.told {
				t.Errorf("waits for the word %t, want %t: %q", got, tc.told, script)
			}
			if !strings.HasSuffix(strings.TrimSuffix(script, "\nexec \"$@\""), waitForWorkersScript) {
				t.Errorf("the wait does not end asking DNS: %q", script)
			}
			hasVolume := slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return cmp.Equal(v, publishedVolume) })
			hasMount := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return cmp.Equal(m, publishedMount) })
			if hasVolume != tc.told || hasMount != tc.told {
				t.Errorf("volume %t, mounted in %s %t; want %t", hasVolume, c.Name, hasMount, tc.told)
			}
			pod := &corev1.Pod{Spec: spec}
			if WaitsForPublished(pod) != tc.told {
				t.Errorf("WaitsForPublished %t, want %t", !tc.told, tc.told)
			}
		})
	}
}

// The script asks for each name made absolute with the Pod's first search
// domain (one name, not one per search domain), waits for the second
// worker until its third query, says so once, and ends.
func TestWaitForWorkersScriptWaitsForEachName(t *testing.T) {
	out, queries := runWaitForWorkers(t, []string{"w0.pi", "w1.pi"}, "ns.svc.cluster.local svc.cluster.local cluster.local",
		`case "$2" in w0.pi.ns.svc.cluster.local.) exit 0 ;; w1.pi.ns.svc.cluster.local.) [ "$asked" -ge 2 ] ;; *) exit 2 ;; esac`)
	if out != "waiting for w1.pi to resolve\n" {
		t.Errorf("output %q, want one line for w1.pi", out)
	}
	want := []string{"w0.pi.ns.svc.cluster.local.", "w1.pi.ns.svc.cluster.local.", "w1.pi.ns.svc.cluster.local.", "w1.pi.ns.svc.cluster.local."}
	if !slices.Equal(queries, want) {
		t.Errorf("queries %q, want %q", queries, want)
	}
}

// A Pod whose first search domain is not where the workers are (a DNS
// policy of None) still finds them: the name as written is tried every
// tenth try. A name already absolute, or already in that domain, is asked
// as it is.
func TestWaitForWorkersScriptFallsBackToTheNameAsWritten(t *testing.T) {
	out, queries := runWaitForWorkers(t, []string{"w0.pi"}, "example.org",
		`[ "$2" = w0.pi ]`)
	if out != "waiting for w0.pi to resolve\n" {
		t.Errorf("output %q", out)
	}
	want := append(slices.Repeat([]string{"w0.pi.example.org."}, 10), "w0.pi")
	if !slices.Equal(queries, want) {
		t.Errorf("queries %q, want %q", queries, want)
	}

	_, queries = runWaitForWorkers(t, []string{"w0.pi.ns.svc.cluster.local", "w1.pi."}, "ns.svc.cluster.local", `exit 0`)
	if want := []string{"w0.pi.ns.svc.cluster.local.", "w1.pi."}; !slices.Equal(queries, want) {
		t.Errorf("queries %q, want %q", queries, want)
	}
	_, queries = runWaitForWorkers(t, []string{"w0.pi"}, "", `exit 0`)
	if want := []string{"w0.pi"}; !slices.Equal(queries, want) {
		t.Errorf("without a search line: queries %q, want %q", queries, want)
	}
}

// The launcher's own entry (runLauncherAsWorker), its hostname or
// localhost, is not waited for: it resolved only through /etc/hosts, at
// the tenth try.
func TestWaitForWorkersScriptSkipsTheLaunchersOwnEntry(t *testing.T) {
	for _, self := range []string{"pi-launcher", "localhost"} {
		out, queries := runWaitForWorkers(t, []string{self, "w0.pi"}, "ns.svc.cluster.local", `[ "$2" = w0.pi.ns.svc.cluster.local. ]`)
		if want := []string{"w0.pi.ns.svc.cluster.local."}; out != "" || !slices.Equal(queries, want) {
			t.Errorf("%s first: output %q, queries %q, want no wait and %q", self, out, queries, want)
		}
	}
}

func TestWaitForWorkersInheritsTheLaunchersImageSecurityAndResources(t *testing.T) {
	w := testjob.MakeMPIJob("pi", "ns")
	c := &w.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template.Spec.Containers[0]
	c.ImagePullPolicy = corev1.PullNever
	c.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}
	c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	c.Command = nil // the image's entrypoint: the wait is an init container
	init := LauncherJob(w.Defaulted(), false, testOpts).Spec.Template.Spec.InitContainers[0]
	if init.Image != c.Image || init.ImagePullPolicy != corev1.PullNever {
		t.Errorf("image %s pull policy %s, want the launcher's", init.Image, init.ImagePullPolicy)
	}
	if diff := cmp.Diff(c.SecurityContext, init.SecurityContext); diff != "" {
		t.Errorf("security context (-launcher +init):\n%s", diff)
	}
	if diff := cmp.Diff(c.Resources, init.Resources); diff != "" {
		t.Errorf("resources (-launcher +init):\n%s", diff)
	}
}
