{{/*
The values as every template reads them: `$v := include "arcsm.values" . | fromYaml`, never .Values
itself (a test holds the templates to it).

They are the given values, laid out as upstream's gha-runner-scale-set-controller chart lays them out,
with those given in the layout of upstream's gha-runner-scale-set-controller-experimental chart (its keys
under `controller`) put on the keys of the same settings: a value file written for either chart means
the same here. A key of the experimental layout wins over its counterpart (both are given only by hand);
a map is merged into arcsm's default key by key, as Helm merges a map given for one of those keys, and a
null counts as not given (the experimental chart's way of saying "the default").
*/}}
{{- define "arcsm.values" -}}
{{- $values := .Values | toYaml | fromYaml }}
{{- $given := .Values.controller }}
{{- if kindIs "map" $given }}
{{- range $from, $to := include "arcsm.experimentalKeys" . | fromYaml }}
{{- $value := $given }}
{{- $found := true }}
{{- range splitList "." $from }}
{{- if and $found (kindIs "map" $value) (hasKey $value .) }}{{ $value = get $value . }}{{ else }}{{ $found = false }}{{ end }}
{{- end }}
{{- if and $found (not (kindIs "invalid" $value)) }}
{{- $into := $values }}
{{- $path := splitList "." $to }}
{{- range initial $path }}
{{- if not (kindIs "map" (get $into .)) }}{{ $_ := set $into . dict }}{{ end }}
{{- $into = get $into . }}
{{- end }}
{{- $key := last $path }}
{{- $current := get $into $key }}
{{- if and (kindIs "map" $value) (kindIs "map" $current) }}
{{- $_ := set $into $key (mergeOverwrite $current (deepCopy $value)) }}
{{- else }}
{{- $_ := set $into $key (deepCopy $value) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml $values }}
{{- end }}

{{/*
The experimental controller chart's keys (under `controller`) and the keys here of the same settings.
Its other keys: `manager.container.image` names the image (arcsm.image); `manager.container.extraPorts`,
`pod.spec.containers` and the fields of `pod.spec` not below go to the pod as they do there
(arcsm.podTemplate); `manager.container.extraArgs` (upstream's controller's flags, not arcsm's),
`manager.config.healthProbeBindAddress` and `.rateLimiter` are ignored, as the same keys of the stable
layout are, and the notes name them; `metadata.annotations` is ignored there too.
*/}}
{{- define "arcsm.experimentalKeys" -}}
replicaCount: replicaCount
metadata.labels: labels
serviceAccount.create: serviceAccount.create
serviceAccount.name: serviceAccount.name
serviceAccount.annotations: serviceAccount.annotations
manager.config.logLevel: flags.logLevel
manager.config.logFormat: flags.logFormat
manager.config.watchSingleNamespace: flags.watchSingleNamespace
manager.config.runnerMaxConcurrentReconciles: flags.runnerMaxConcurrentReconciles
manager.config.excludeLabelPropagationPrefixes: flags.excludeLabelPropagationPrefixes
manager.config.k8sClientRateLimiterQPS: flags.k8sClientRateLimiterQPS
manager.config.k8sClientRateLimiterBurst: flags.k8sClientRateLimiterBurst
manager.container.pullPolicy: image.pullPolicy
manager.container.env: env
manager.container.securityContext: securityContext
manager.container.resources: resources
pod.metadata.labels: podLabels
pod.metadata.annotations: podAnnotations
pod.spec.securityContext: podSecurityContext
pod.spec.priorityClassName: priorityClassName
pod.spec.nodeSelector: nodeSelector
pod.spec.tolerations: tolerations
pod.spec.affinity: affinity
pod.spec.topologySpreadConstraints: topologySpreadConstraints
pod.spec.terminationGracePeriodSeconds: terminationGracePeriodSeconds
pod.spec.volumes: volumes
pod.volumeMounts: volumeMounts
metrics.controllerManagerAddr: metrics.controllerManagerAddr
metrics.listenerAddr: metrics.listenerAddr
metrics.listenerEndpoint: metrics.listenerEndpoint
{{- end }}

{{/* The keys given that arcsm has no use for, named as given (a YAML list). */}}
{{- define "arcsm.ignoredKeys" -}}
{{- $v := include "arcsm.values" . | fromYaml -}}
{{- $ignored := list }}
{{- if dig "flags" "healthProbeBindAddress" "" $v }}{{ $ignored = append $ignored "flags.healthProbeBindAddress (the probes are on metrics.controllerManagerAddr)" }}{{ end }}
{{- if dig "flags" "rateLimiter" "" $v }}{{ $ignored = append $ignored "flags.rateLimiter" }}{{ end }}
{{- if dig "flags" "updateStrategy" "" $v }}{{ $ignored = append $ignored "flags.updateStrategy (arcsm always lets running jobs finish on a spec change, as \"eventual\" did)" }}{{ end }}
{{- if dig "controller" "manager" "container" "extraArgs" list $v }}{{ $ignored = append $ignored "controller.manager.container.extraArgs (flags of upstream's controller)" }}{{ end }}
{{- if dig "controller" "manager" "config" "healthProbeBindAddress" "" $v }}{{ $ignored = append $ignored "controller.manager.config.healthProbeBindAddress (the probes are on controller.metrics.controllerManagerAddr)" }}{{ end }}
{{- if dig "controller" "manager" "config" "rateLimiter" "" $v }}{{ $ignored = append $ignored "controller.manager.config.rateLimiter" }}{{ end }}
{{- toYaml $ignored }}
{{- end }}
