{{/* Names: the experimental chart names every object after the scale set's object, the release's name. */}}
{{- define "standin.name" -}}
{{- $name := .Values.runnerScaleSetName | default .Release.Name | replace "_" "-" | trimSuffix "-" }}
{{- if or (not $name) (gt (len $name) 45) }}
{{- fail (printf "the scale set's name %q must be 1 to 45 characters long" $name) }}
{{- end }}
{{- $name }}
{{- end }}

{{- define "standin.namespace" -}}
{{- .Values.namespaceOverride | default .Release.Namespace }}
{{- end }}

{{- define "standin.mode" -}}
{{- .Values.runner.mode | default "" | toString }}
{{- end }}

{{- define "standin.secretName" -}}
{{- .Values.auth.secretName | default (printf "%s-github-secret" (include "standin.name" .)) }}
{{- end }}

{{/* The chart makes the runners' account unless kubernetes mode is given one. */}}
{{- define "standin.runnerAccount" -}}
{{- if ne (include "standin.mode" .) "kubernetes" }}
{{- include "standin.name" . }}-no-permission
{{- else }}
{{- .Values.runner.kubernetesMode.serviceAccountName | default (printf "%s-kube-mode" (include "standin.name" .)) }}
{{- end }}
{{- end }}

{{- define "standin.kubeModeAccount" -}}
{{- if and (eq (include "standin.mode" .) "kubernetes") (not .Values.runner.kubernetesMode.serviceAccountName) }}true{{ end }}
{{- end }}

{{/* Every object's labels (each adds its app.kubernetes.io/component); the runner pods' too. */}}
{{- define "standin.labels" -}}
helm.sh/chart: gha-rs-{{ .Chart.Version }}
app.kubernetes.io/name: {{ include "standin.name" . }}
app.kubernetes.io/instance: {{ include "standin.name" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gha-rs
actions.github.com/scale-set-name: {{ include "standin.name" . }}
actions.github.com/scale-set-namespace: {{ include "standin.namespace" . }}
{{- end }}

{{/* A user's labels or annotations without those under actions.github.com/, which the chart keeps for itself. */}}
{{- define "standin.unreserved" -}}
{{- $kept := dict }}
{{- range $key, $value := . }}
{{- if not (hasPrefix "actions.github.com/" $key) }}{{ $_ := set $kept $key $value }}{{ end }}
{{- end }}
{{- toYaml $kept }}
{{- end }}
