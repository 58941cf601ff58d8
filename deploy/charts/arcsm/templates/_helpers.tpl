{{/* Names, labels and the values derived from several keys. */}}

{{- define "arcsm.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release name, or <release>-arcsm when the release name does not contain the chart's. */}}
{{- define "arcsm.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "arcsm.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride }}
{{- end }}

{{- define "arcsm.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "arcsm.selectorLabels" -}}
app.kubernetes.io/name: {{ include "arcsm.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end }}

{{/*
Every object's labels. arcsm takes the place of the gha-rs-controller application, and says so with
its part-of label, which upstream's gha-runner-scale-set chart looks for (see the Deployment).
*/}}
{{- define "arcsm.labels" -}}
helm.sh/chart: {{ include "arcsm.chart" . }}
{{ include "arcsm.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: gha-rs-controller
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- range $k, $v := .Values.labels }}
{{ $k }}: {{ $v | quote }}
{{- end }}
{{- end }}

{{- define "arcsm.serviceAccountName" -}}
{{- if eq .Values.serviceAccount.name "default" }}
{{- fail "serviceAccount.name cannot be \"default\": the controller needs a ServiceAccount of its own" }}
{{- end }}
{{- if .Values.serviceAccount.create }}
{{- default (include "arcsm.fullname" .) .Values.serviceAccount.name }}
{{- else if .Values.serviceAccount.name }}
{{- .Values.serviceAccount.name }}
{{- else }}
{{- fail "serviceAccount.name must name an existing ServiceAccount when serviceAccount.create is false" }}
{{- end }}
{{- end }}

{{- define "arcsm.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}

{{/* The namespaces the controller watches, as a YAML list; empty: every namespace. */}}
{{- define "arcsm.watchNamespaces" -}}
{{- $namespaces := list }}
{{- with .Values.flags.watchSingleNamespace }}
{{- $namespaces = append $namespaces . }}
{{- end }}
{{- range .Values.flags.watchNamespaces }}
{{- $namespaces = append $namespaces . }}
{{- end }}
{{- toYaml (uniq $namespaces) }}
{{- end }}

{{/* The port of metrics.controllerManagerAddr, where arcsm serves its API, probes and metrics. */}}
{{- define "arcsm.httpPort" -}}
{{- $addr := toString .Values.metrics.controllerManagerAddr }}
{{- $port := regexFind "[0-9]+$" $addr }}
{{- if or (not (contains ":" $addr)) (not $port) (eq $port "0") }}
{{- fail (printf "metrics.controllerManagerAddr %q must be an address with a port, like \":8080\": arcsm serves its probes, API and metrics there" $addr) }}
{{- end }}
{{- $port }}
{{- end }}

{{/* The Lease of leader election. */}}
{{- define "arcsm.leaseName" -}}
{{- default (printf "%s-controller" (include "arcsm.fullname" .)) .Values.leaderElection.leaseName }}
{{- end }}

{{/* The claim of a one-replica install: named as a StatefulSet names its replica 0's claim, so that
going to more replicas keeps this journal as replica 0's. */}}
{{- define "arcsm.journalClaim" -}}
journal-{{ include "arcsm.fullname" . }}-0
{{- end }}

{{- define "arcsm.journalClaimSpec" -}}
accessModes:
  {{- toYaml .Values.journal.persistence.accessModes | nindent 2 }}
{{- with .Values.journal.persistence.storageClass }}
storageClassName: {{ if eq . "-" }}""{{ else }}{{ . | quote }}{{ end }}
{{- end }}
resources:
  requests:
    storage: {{ .Values.journal.persistence.size | quote }}
{{- end }}
