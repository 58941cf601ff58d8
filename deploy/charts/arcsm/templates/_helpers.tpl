{{/* Names, labels and the values derived from several keys (each reads the values of arcsm.values). */}}

{{- define "arcsm.name" -}}
{{- $v := include "arcsm.values" . | fromYaml -}}
{{- default .Chart.Name $v.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release name, or <release>-arcsm when the release name does not contain the chart's. */}}
{{- define "arcsm.fullname" -}}
{{- $v := include "arcsm.values" . | fromYaml -}}
{{- if $v.fullnameOverride }}
{{- $v.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name $v.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "arcsm.namespace" -}}
{{- $v := include "arcsm.values" . | fromYaml -}}
{{- default .Release.Namespace $v.namespaceOverride }}
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
{{- $v := include "arcsm.values" . | fromYaml -}}
helm.sh/chart: {{ include "arcsm.chart" . }}
{{ include "arcsm.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: gha-rs-controller
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- range $key, $value := $v.labels }}
{{ $key }}: {{ $value | quote }}
{{- end }}
{{- end }}

{{- define "arcsm.serviceAccountName" -}}
{{- $v := include "arcsm.values" . | fromYaml -}}
{{- if eq $v.serviceAccount.name "default" }}
{{- fail "serviceAccount.name cannot be \"default\": the controller needs a ServiceAccount of its own" }}
{{- end }}
{{- if $v.serviceAccount.create }}
{{- default (include "arcsm.fullname" .) $v.serviceAccount.name }}
{{- else if $v.serviceAccount.name }}
{{- $v.serviceAccount.name }}
{{- else }}
{{- fail "serviceAccount.name must name an existing ServiceAccount when serviceAccount.create is false" }}
{{- end }}
{{- end }}

{{/* The image: the experimental layout's controller.manager.container.image names it whole. */}}
{{- define "arcsm.image" -}}
{{- $v := include "arcsm.values" . | fromYaml -}}
{{- with dig "controller" "manager" "container" "image" "" $v }}
{{- . }}
{{- else }}
{{- printf "%s:%s" $v.image.repository ($v.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}
{{- end }}

{{/* The namespaces the controller watches, as a YAML list; empty: every namespace. */}}
{{- define "arcsm.watchNamespaces" -}}
{{- $v := include "arcsm.values" . | fromYaml -}}
{{- $namespaces := list }}
{{- with $v.flags.watchSingleNamespace }}
{{- $namespaces = append $namespaces . }}
{{- end }}
{{- range $v.flags.watchNamespaces }}
{{- $namespaces = append $namespaces . }}
{{- end }}
{{- toYaml (uniq $namespaces) }}
{{- end }}

{{/* The port of metrics.controllerManagerAddr, where arcsm serves its API, probes and metrics. */}}
{{- define "arcsm.httpPort" -}}
{{- $v := include "arcsm.values" . | fromYaml -}}
{{- $addr := toString $v.metrics.controllerManagerAddr }}
{{- $port := regexFind "[0-9]+$" $addr }}
{{- if or (not (contains ":" $addr)) (not $port) (eq $port "0") }}
{{- fail (printf "metrics.controllerManagerAddr %q must be an address with a port, like \":8080\": arcsm serves its probes, API and metrics there" $addr) }}
{{- end }}
{{- $port }}
{{- end }}

{{/* The Lease of leader election. */}}
{{- define "arcsm.leaseName" -}}
{{- $v := include "arcsm.values" . | fromYaml -}}
{{- default (printf "%s-controller" (include "arcsm.fullname" .)) $v.leaderElection.leaseName }}
{{- end }}

{{/* The claim of a one-replica install: named as a StatefulSet names its replica 0's claim, so that
going to more replicas keeps this journal as replica 0's. */}}
{{- define "arcsm.journalClaim" -}}
journal-{{ include "arcsm.fullname" . }}-0
{{- end }}

{{- define "arcsm.journalClaimSpec" -}}
{{- $v := include "arcsm.values" . | fromYaml -}}
accessModes:
  {{- toYaml $v.journal.persistence.accessModes | nindent 2 }}
{{- with $v.journal.persistence.storageClass }}
storageClassName: {{ if eq . "-" }}""{{ else }}{{ . | quote }}{{ end }}
{{- end }}
resources:
  requests:
    storage: {{ $v.journal.persistence.size | quote }}
{{- end }}
