{{/*
The controller's pod: `arcsm run` with its journal on /var/lib/arcsm and the HTTP API (probes, history,
metrics) on metrics.controllerManagerAddr. The Deployment and the StatefulSet share it.
*/}}
{{- define "arcsm.podTemplate" -}}
{{- $port := include "arcsm.httpPort" . -}}
metadata:
  annotations:
    kubectl.kubernetes.io/default-container: arcsm
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  labels:
    {{- include "arcsm.labels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "arcsm.serviceAccountName" . }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . | quote }}
  {{- end }}
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  containers:
    - name: arcsm
      image: {{ include "arcsm.image" . | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        - run
        - --journal=/var/lib/arcsm/journal.db
        - --http={{ .Values.metrics.controllerManagerAddr }}
        {{- if .Values.pprof.addr }}
        - --debug-endpoints
        {{- end }}
        {{- range (include "arcsm.watchNamespaces" . | fromYamlArray) }}
        - --namespace={{ . }}
        {{- end }}
        - --log-level={{ .Values.flags.logLevel }}
        - --log-format={{ .Values.flags.logFormat }}
        - --runner-concurrency={{ .Values.flags.runnerMaxConcurrentReconciles | default 2 }}
        {{- range .Values.flags.excludeLabelPropagationPrefixes }}
        - --exclude-label-propagation-prefix={{ . }}
        {{- end }}
        {{- with .Values.flags.k8sClientRateLimiterQPS }}
        - --qps={{ . }}
        {{- end }}
        {{- with .Values.flags.k8sClientRateLimiterBurst }}
        - --burst={{ . }}
        {{- end }}
        {{- with .Values.http }}
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
        - --listener-metrics-addr={{ .Values.metrics.listenerAddr | default "0" }}
        - --listener-metrics-endpoint={{ .Values.metrics.listenerEndpoint }}
        {{- range .Values.imagePullSecrets }}
        - --listener-image-pull-secret={{ .name }}
        {{- end }}
        {{- with .Values.listener.entrypoint }}
        - --listener-entrypoint={{ . }}
        {{- end }}
        {{- with .Values.listener.logLevel }}
        - --listener-log-level={{ . }}
        {{- end }}
        {{- with .Values.listener.logFormat }}
        - --listener-log-format={{ . }}
        {{- end }}
        {{- if .Values.leaderElection.enabled }}
        - --leader-elect
        - --lease-name={{ include "arcsm.leaseName" . }}
        - --lease-duration={{ .Values.leaderElection.leaseDuration }}
        - --renew-deadline={{ .Values.leaderElection.renewDeadline }}
        - --retry-period={{ .Values.leaderElection.retryPeriod }}
        {{- else }}
        - --no-leader-elect
        {{- end }}
        - --journal-retain-days={{ .Values.journal.retention.days }}
        - --journal-retain-records={{ .Values.journal.retention.records | int64 }}
        - --journal-retain-bytes={{ .Values.journal.retention.bytes }}
        - --history-retain-days={{ .Values.journal.history.days }}
        - --history-retain-records={{ .Values.journal.history.records | int64 }}
      env:
        # The image of the listener pods, and the namespace they live in (upstream's variables).
        - name: CONTROLLER_MANAGER_CONTAINER_IMAGE
          value: {{ .Values.listener.image | default (include "arcsm.image" .) | quote }}
        - name: CONTROLLER_MANAGER_POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        # The object of the controller's own Events (its journal failing).
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        {{- with .Values.env }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: http
          containerPort: {{ $port }}
          protocol: TCP
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
      {{- with .Values.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        - name: journal
          mountPath: /var/lib/arcsm
        - name: tmp
          mountPath: /tmp
        {{- with .Values.volumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    - name: tmp
      emptyDir: {}
    {{- if not .Values.journal.persistence.enabled }}
    - name: journal
      emptyDir: {}
    {{- else if eq (int .Values.replicaCount) 1 }}
    - name: journal
      persistentVolumeClaim:
        claimName: {{ include "arcsm.journalClaim" . }}
    {{- end }}
    {{- with .Values.volumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
