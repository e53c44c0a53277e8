{{/*
Every object is named mpi-operator, as config/default names them: the
leader election Lease has upstream's fixed name, so one install per
cluster is what the operator supports.
*/}}
{{- define "mpi-operator.name" -}}mpi-operator{{- end }}

{{- define "mpi-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mpi-operator.name" . }}
{{- end }}

{{- define "mpi-operator.labels" -}}
{{ include "mpi-operator.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/*
The RBAC rules come from files/role.yaml, a copy of config/rbac/role.yaml
that controller-gen generates from the code's markers (make manifests
copies it; make verify fails when it is stale), so the chart never grants
a verb the code does not use and never misses one it does. The result is
a dict by kind: ClusterRole (MPIJobs and their children) and Role (leader
election, in the operator's own namespace).
*/}}
{{- define "mpi-operator.generatedRoles" -}}
{{- $out := dict }}
{{- range $doc := regexSplit "(?m)^---[ \t]*$" (.Files.Get "files/role.yaml") -1 }}
{{- $o := fromYaml $doc }}
{{- if $o.kind }}{{ $_ := set $out $o.kind $o }}{{ end }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/*
A rule is cluster-scoped when every resource it names is; only these stay
in a ClusterRole when the operator serves a list of namespaces.
*/}}
{{- define "mpi-operator.clusterScoped" -}}
{{- $rule := . }}
{{- $scoped := true }}
{{- range $rule.resources }}
{{- if not (has . (list "priorityclasses")) }}{{ $scoped = false }}{{ end }}
{{- end }}
{{- if $scoped }}true{{ end }}
{{- end }}
