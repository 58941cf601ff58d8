{{/*
The controller's pod: `arcsm run` with its journal on /var/lib/arcsm and the HTTP API (probes, history,
metrics) on metrics.controllerManagerAddr. The Deployment and the StatefulSet share it.
*/}}
{{- define "arcsm.podTemplate" -}}
{{- $v := include "arcsm.values" . | fromYaml -}}
{{- /* What the experimental layout gives the pod beyond the keys of arcsm.experimentalKeys. */}}
{{- $container := dig "controller" "manager" "container" dict $v }}
{{- $podSpec := dig "controller" "pod" "spec" dict $v }}
{{- $podFields := omit $podSpec "containers" "serviceAccountName" "imagePullSecrets" "securityContext" "priorityClassName" "terminationGracePeriodSeconds" "volumes" "nodeSelector" "affinity" "topologySpreadConstraints" "tolerations" }}
{{- $port := include "arcsm.httpPort" . -}}
metadata:
  annotations:
    kubectl.kubernetes.io/default-container: arcsm
    {{- with $v.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  labels:
    {{- include "arcsm.labels" . | nindent 4 }}
    {{- with $v.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "arcsm.serviceAccountName" . }}
  {{- with $v.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.priorityClassName }}
  priorityClassName: {{ . | quote }}
  {{- end }}
  terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
  containers:
    - name: arcsm
      image: {{ include "arcsm.image" . | quote }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      args:
        - run
        - --journal=/var/lib/arcsm/journal.db
        - --http={{ $v.metrics.controllerManagerAddr }}
        {{- if $v.pprof.addr }}
        - --debug-endpoints
        {{- end }}
        {{- range (include "arcsm.watchNamespaces" . | fromYamlArray) }}
        - --namespace={{ . }}
        {{- end }}
        - --log-level={{ $v.flags.logLevel }}
        - --log-format={{ $v.flags.logFormat }}
        - --runner-concurrency={{ $v.flags.runnerMaxConcurrentReconciles | default 2 }}
        {{- range $v.flags.excludeLabelPropagationPrefixes }}
        - --exclude-label-propagation-prefix={{ . }}
        {{- end }}
        {{- with $v.flags.k8sClientRateLimiterQPS }}
        - --qps={{ . }}
        {{- end }}
        {{- with $v.flags.k8sClientRateLimiterBurst }}
        - --burst={{ . }}
        {{- end }}
        {{- with $v.http }}
        {{- with .maxConnections }}
        - --http-max-connections={{ . }}
        {{- end }}
        {{- with .maxStreams }}
        - --http-max-streams={{ . }}
        {{- end }}
        {{- with .headerTimeout }}
        - --http-header-timeout={{ . }}
        {{- end }}
        {{- with .idleTimeout }}
        - --http-idle-timeout={{ . }}
        {{- end }}
        {{- with .writeTimeout }}
        - --http-write-timeout={{ . }}
        {{- end }}
        {{- end }}
        - --listener-metrics-addr={{ $v.metrics.listenerAddr | default "0" }}
        - --listener-metrics-endpoint={{ $v.metrics.listenerEndpoint }}
        {{- range $v.imagePullSecrets }}
        - --listener-image-pull-secret={{ .name }}
        {{- end }}
        {{- with $v.listener.entrypoint }}
        - --listener-entrypoint={{ . }}
        {{- end }}
        {{- with $v.listener.logLevel }}
        - --listener-log-level={{ . }}
        {{- end }}
        {{- with $v.listener.logFormat }}
        - --listener-log-format={{ . }}
        {{- end }}
        {{- if $v.leaderElection.enabled }}
        - --leader-elect
        - --lease-name={{ include "arcsm.leaseName" . }}
        - --lease-duration={{ $v.leaderElection.leaseDuration }}
        - --renew-deadline={{ $v.leaderElection.renewDeadline }}
        - --retry-period={{ $v.leaderElection.retryPeriod }}
        {{- else }}
        - --no-leader-elect
        {{- end }}
        - --journal-retain-days={{ $v.journal.retention.days }}
        - --journal-retain-records={{ $v.journal.retention.records | int64 }}
        - --journal-retain-bytes={{ $v.journal.retention.bytes }}
        - --history-retain-days={{ $v.journal.history.days }}
        - --history-retain-records={{ $v.journal.history.records | int64 }}
      env:
        # The image of the listener pods, and the namespace they live in (upstream's variables).
        - name: CONTROLLER_MANAGER_CONTAINER_IMAGE
          value: {{ $v.listener.image | default (include "arcsm.image" .) | quote }}
        - name: CONTROLLER_MANAGER_POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        # The object of the controller's own Events (its journal failing).
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        {{- with $v.env }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: http
          containerPort: {{ $port }}
          protocol: TCP
        {{- with $container.extraPorts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      startupProbe:
        httpGet:
          path: /healthz
          port: http
        periodSeconds: 2
        failureThreshold: 60
      livenessProbe:
        httpGet:
          path: /healthz
          port: http
        periodSeconds: 10
        timeoutSeconds: 5
        failureThreshold: 3
      readinessProbe:
        httpGet:
          path: /readyz
          port: http
        periodSeconds: 5
        timeoutSeconds: 5
        # Kubernetes' default: one slow answer on a busy node does not take the pod out of the Service.
        failureThreshold: 3
      {{- with $v.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        - name: journal
          mountPath: /var/lib/arcsm
        - name: tmp
          mountPath: /tmp
        {{- with $v.volumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    {{- with $podSpec.containers }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  volumes:
    - name: tmp
      emptyDir: {}
    {{- if not $v.journal.persistence.enabled }}
    - name: journal
      emptyDir: {}
    {{- else if eq (int $v.replicaCount) 1 }}
    - name: journal
      persistentVolumeClaim:
        claimName: {{ include "arcsm.journalClaim" . }}
    {{- end }}
    {{- with $v.volumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $podFields }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}
