{{/* Names: upstream derives everything from the scale set name and the base name gha-rs. */}}
{{- define "standin.scaleSetName" -}}
{{- .Values.runnerScaleSetName | default .Release.Name }}
{{- end }}

{{- define "standin.fullname" -}}
{{- printf "%s-gha-rs" (include "standin.scaleSetName" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "standin.kubeMode" -}}
{{- if has (toString .Values.containerMode.type) (list "kubernetes" "kubernetes-novolume") }}true{{ end }}
{{- end }}

{{- define "standin.secretName" -}}
{{- if kindIs "string" .Values.githubConfigSecret }}
{{- required "githubConfigSecret is required" .Values.githubConfigSecret }}
{{- else }}
{{- include "standin.fullname" . | replace "_" "-" }}-github-secret
{{- end }}
{{- end }}

{{- define "standin.labels" -}}
helm.sh/chart: gha-rs-{{ .Chart.Version }}
app.kubernetes.io/name: {{ include "standin.scaleSetName" . }}
app.kubernetes.io/instance: {{ include "standin.scaleSetName" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gha-rs
actions.github.com/scale-set-name: {{ include "standin.scaleSetName" . }}
actions.github.com/scale-set-namespace: {{ .Release.Namespace }}
{{- end }}

{{/*
The controller's service account, as upstream finds it: controllerServiceAccount.name and .namespace
when given; else the one Deployment in the cluster labelled app.kubernetes.io/part-of=gha-rs-controller
(those with actions.github.com/controller-watch-single-namespace count only for that namespace), whose
labels actions.github.com/controller-service-account-name and -namespace name it. Anything else fails.
Returns {name, namespace} as YAML.
*/}}
{{- define "standin.controller" -}}
{{- $given := default (dict) .Values.controllerServiceAccount }}
{{- if and $given.name $given.namespace }}
{{- toYaml (dict "name" $given.name "namespace" $given.namespace) }}
{{- else }}
{{- $cluster := list }}
{{- $single := dict }}
{{- range (lookup "apps/v1" "Deployment" "" "").items }}
{{- $labels := default (dict) .metadata.labels }}
{{- if eq (get $labels "app.kubernetes.io/part-of") "gha-rs-controller" }}
{{- if hasKey $labels "actions.github.com/controller-watch-single-namespace" }}
{{- $_ := set $single (get $labels "actions.github.com/controller-watch-single-namespace") $labels }}
{{- else }}
{{- $cluster = append $cluster $labels }}
{{- end }}
{{- end }}
{{- end }}
{{- if and (not $cluster) (not $single) }}
{{- fail "No gha-rs-controller deployment found using label (app.kubernetes.io/part-of=gha-rs-controller)" }}
{{- end }}
{{- if and $cluster $single }}
{{- fail "Found both gha-rs-controller installed with flags.watchSingleNamespace set and unset in cluster" }}
{{- end }}
{{- if gt (len $cluster) 1 }}
{{- fail "More than one gha-rs-controller deployment found using label (app.kubernetes.io/part-of=gha-rs-controller)" }}
{{- end }}
{{- $found := dict }}
{{- if $cluster }}
{{- $found = first $cluster }}
{{- else if hasKey $single .Release.Namespace }}
{{- $found = get $single .Release.Namespace }}
{{- else }}
{{- fail "No gha-rs-controller deployment that watch this namespace found using label (actions.github.com/controller-watch-single-namespace)" }}
{{- end }}
{{- $name := get $found "actions.github.com/controller-service-account-name" }}
{{- $namespace := get $found "actions.github.com/controller-service-account-namespace" }}
{{- if or (not $name) (not $namespace) }}
{{- fail "No service account name or namespace found for gha-rs-controller deployment" }}
{{- end }}
{{- toYaml (dict "name" (default $name $given.name) "namespace" (default $namespace $given.namespace)) }}
{{- end }}
{{- end }}
