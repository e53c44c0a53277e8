{{- /*
The Validation cell of a field. Optional is left out (it is the rule, and
the page says so); Enum is written from its marker so that an empty value
shows as ""; CEL rules are shown unless they are the field type's own,
which its section lists.
*/ -}}
{{- define "field_validation" -}}
{{- $f := . -}}
{{- range $f.Validation -}}
{{- if not (or (hasPrefix "Optional:" .) (hasPrefix "Enum:" .)) -}}
{{ . | replace ": {}" "" | markdownRenderFieldDoc }}<br />
{{- end -}}
{{- end -}}
{{- with index $f.Markers "kubebuilder:validation:Enum" -}}
Enum: {{ range $i, $v := index . 0 }}{{ if $i }}, {{ end }}`{{ if eq (toString $v) "" }}""{{ else }}{{ $v }}{{ end }}`{{ end }}<br />
{{- end -}}
{{- $rules := index $f.Markers "kubebuilder:validation:XValidation" -}}
{{- if not (deepEqual $rules (index $f.Type.Markers "kubebuilder:validation:XValidation")) -}}
{{- range $rules }}{{ template "cel_rule_cell" . }}<br />{{ end -}}
{{- end -}}
{{- end -}}

{{- /* A CEL rule: its message, then the expression. */ -}}
{{- define "cel_rule" -}}
{{ .Message | replace "<" "&lt;" }}: `{{ .Rule }}`
{{- end -}}

{{- /* The same in a table cell, where | must be escaped even inside a code span. */ -}}
{{- define "cel_rule_cell" -}}
{{ .Message | replace "<" "&lt;" | replace "|" "\\|" }}: `{{ .Rule | replace "|" "\\|" }}`
{{- end -}}
