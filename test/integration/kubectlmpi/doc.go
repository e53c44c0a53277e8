// Package kubectlmpi runs the `kubectl mpi` plugin's commands against a
// real kube-apiserver (envtest), through the kubeconfig flag as a user
// would. No operator, kubelet or scheduler runs: each test writes the
// MPIJob, its Pods, launcher Job, ConfigMap and events in the states it
// needs, as they would have written them, and checks what the plugin
// prints.
package kubectlmpi
