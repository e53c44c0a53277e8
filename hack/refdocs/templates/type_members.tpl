{{- define "type_members" -}}
{{- $field := . -}}
{{- if eq $field.Name "metadata" -}}
Refer to Kubernetes API documentation for fields of `metadata`.
{{- else -}}
{{- /* As controller-gen does for the CRD: a field with no comment of its own is described by its type's. */ -}}
{{ markdownRenderFieldDoc ($field.Doc | default $field.Type.Doc) }}
{{- end -}}
{{- end -}}
