{{/*
Names are fixed, not prefixed with the release's: the objects are the
ones deploy/ holds, so a ClusterSet moves between kubectl apply -k and
helm install without renaming anything, and one management cluster runs
one mcs-gitops (two would race for the same commits).
*/}}

{{- define "mcs-gitops.labels" -}}
app.kubernetes.io/name: mcs-gitops
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{- define "mcs-gitops.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end }}

{{/* The pod's security context: Pod Security "restricted", as deploy/. */}}
{{- define "mcs-gitops.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "mcs-gitops.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end }}

{{- define "mcs-gitops.volumeMounts" -}}
{{- if .Values.inventory.enabled }}
- name: access-providers
  mountPath: /etc/mcs-gitops/access
  readOnly: true
{{- end }}
- name: config
  mountPath: /etc/mcs-gitops
  readOnly: true
- name: workdir
  mountPath: /var/lib/mcs-gitops
- name: tmp
  mountPath: /tmp
{{- end }}

{{- define "mcs-gitops.volumes" -}}
{{- if .Values.inventory.enabled }}
- name: access-providers
  configMap:
    name: mcs-gitops-access-providers
{{- end }}
- name: config
  configMap:
    name: {{ .Values.existingConfigMap | default "mcs-gitops-config" }}
- name: workdir
  emptyDir: {}
- name: tmp
  emptyDir: {}
{{- end }}

{{/* What the pod templates share beyond the containers. */}}
{{- define "mcs-gitops.podExtras" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end }}

{{/* The pod template's annotations: a changed config rolls the pods. */}}
{{- define "mcs-gitops.podAnnotations" -}}
{{- if not .Values.existingConfigMap }}
checksum/config: {{ toYaml .Values.clusterSet | sha256sum }}
{{- end }}
{{- with .Values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end }}
