package kubectlmpi

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// Hostfile is the output of `kubectl mpi hostfile` in JSON and YAML.
type Hostfile struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// ConfigMap is the ConfigMap it was read from.
	ConfigMap string `json:"configMap"`
	// Hosts are the hosts it lists, in order.
	Hosts []string `json:"hosts"`
	// Hostfile is the file as mpirun reads it.
	Hostfile string `json:"hostfile"`
}

// readHostfile reads the hostfile the operator wrote for the job.
func readHostfile(ctx context.Context, c client.Reader, namespace, name string) (*Hostfile, error) {
	job := &kubeflow.MPIJob{}
	job.Namespace, job.Name = namespace, name
	cm := &corev1.ConfigMap{}
	key := types.NamespacedName{Namespace: namespace, Name: builder.ConfigMapName(job)}
	if err := c.Get(ctx, key, cm); err != nil {
		return nil, fmt.Errorf("reading the hostfile of MPIJob %s/%s: %w", namespace, name, err)
	}
	text, ok := cm.Data[builder.HostfileKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no key %q", namespace, cm.Name, builder.HostfileKey)
	}
	return &Hostfile{Namespace: namespace, Name: name, ConfigMap: cm.Name, Hosts: builder.HostfileHosts(text), Hostfile: text}, nil
}
