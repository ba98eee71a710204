{{/* Object name prefix: <release>-sparkprof unless the release name already says sparkprof. */}}
{{- define "sparkprof.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "sparkprof.labels" -}}
app.kubernetes.io/name: {{ default .Chart.Name .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* -agentpath option (empty in pluginOnly mode) plus the user's JVM options. */}}
{{- define "sparkprof.javaOptions" -}}
{{- $agent := "" -}}
{{- if not .Values.sparkprof.pluginOnly -}}
{{- $agent = printf "-agentpath:%s/libsparkprof.so" .Values.sparkprof.installDir -}}
{{- with .Values.sparkprof.agentOptions }}{{ $agent = printf "%s=%s" $agent . }}{{ end -}}
{{- end -}}
{{- trim (printf "%s %s" .Values.sparkprof.extraJavaOptions $agent) -}}
{{- end -}}

{{/* The Spark configuration, as a YAML map of key: value (strings). */}}
{{- define "sparkprof.sparkConf" -}}
{{- $v := .Values -}}
{{- $jar := printf "%s/%s" $v.sparkprof.installDir $v.sparkprof.jarName -}}
{{- $conf := dict
  "spark.plugins" "io.sparkprof.SparkProfPlugin"
  "spark.driver.extraClassPath" $jar
  "spark.executor.extraClassPath" $jar
  "spark.sparkprof.enabled" (toString $v.plugin.enabled)
  "spark.sparkprof.flushInterval" (toString $v.plugin.flushInterval)
  "spark.sparkprof.prometheus.port" (toString (int64 $v.plugin.prometheusPort))
  "spark.sparkprof.prometheus.bindAddress" (toString $v.plugin.prometheusBindAddress)
  "spark.sparkprof.outputDir" (toString $v.plugin.outputDir)
  "spark.sparkprof.maxBatchesPerSecond" (toString (int64 $v.plugin.maxBatchesPerSecond))
  "spark.sparkprof.maxBatchBytes" (toString $v.plugin.maxBatchBytes)
  "spark.sparkprof.metricsRefreshInterval" (toString $v.plugin.metricsRefreshInterval)
  "spark.sparkprof.finalBatchTimeout" (toString $v.plugin.finalBatchTimeout)
-}}
{{- $javaOptions := include "sparkprof.javaOptions" . -}}
{{- if $javaOptions -}}
{{- $_ := set $conf "spark.driver.extraJavaOptions" $javaOptions -}}
{{- $_ := set $conf "spark.executor.extraJavaOptions" $javaOptions -}}
{{- end -}}
{{- if and $v.sparkprof.pluginOnly $v.sparkprof.agentOptions -}}
{{- $_ := set $conf "spark.sparkprof.agentOptions" $v.sparkprof.agentOptions -}}
{{- end -}}
{{- with $v.sparkprof.podTemplateDir -}}
{{- $_ := set $conf "spark.kubernetes.driver.podTemplateFile" (printf "%s/driver-pod-template.yaml" .) -}}
{{- $_ := set $conf "spark.kubernetes.driver.podTemplateContainerName" "spark-kubernetes-driver" -}}
{{- if $v.installFromImage.enabled -}}
{{- $_ := set $conf "spark.kubernetes.executor.podTemplateFile" (printf "%s/executor-pod-template.yaml" .) -}}
{{- $_ := set $conf "spark.kubernetes.executor.podTemplateContainerName" "spark-kubernetes-executor" -}}
{{- end -}}
{{- end -}}
{{- $otel := $v.monitoring.openTelemetry -}}
{{- if $otel.enabled -}}
{{- if not (has $otel.protocol (list "grpc" "http")) -}}
{{- fail (printf "monitoring.openTelemetry.protocol must be grpc or http, not %q" $otel.protocol) -}}
{{- end -}}
{{- $_ := set $conf "spark.sparkprof.otel.enabled" "true" -}}
{{- $_ := set $conf "spark.sparkprof.otel.endpoint" (toString $otel.endpoint) -}}
{{- $_ := set $conf "spark.sparkprof.otel.protocol" (toString $otel.protocol) -}}
{{- $_ := set $conf "spark.sparkprof.otel.samplingRatio" (toString $otel.samplingRatio) -}}
{{- $_ := set $conf "spark.sparkprof.otel.serviceName" (toString $otel.serviceName) -}}
{{- $_ := set $conf "spark.sparkprof.otel.exporterType" (toString $otel.exporterType) -}}
{{- end -}}
{{- if $v.monitoring.s3aMetrics.enabled -}}
{{- $_ := set $conf "spark.sparkprof.s3aMetrics.enabled" "true" -}}
{{- $_ := set $conf "spark.hadoop.fs.iostatistics.thread.level.enabled" "true" -}}
{{- else -}}
{{- $_ := set $conf "spark.sparkprof.s3aMetrics.enabled" "false" -}}
{{- end -}}
{{- range $key, $value := $v.plugin.extraConf -}}
{{- $_ := set $conf $key (toString $value) -}}
{{- end -}}
{{- toYaml $conf -}}
{{- end -}}

{{/* The init container that copies the sparkprof files into installDir (volume "sparkprof"). */}}
{{- define "sparkprof.filesInitContainer" -}}
- name: sparkprof-files
  image: {{ printf "%s:%s" .Values.installFromImage.image.repository .Values.installFromImage.image.tag | quote }}
  imagePullPolicy: {{ .Values.installFromImage.image.pullPolicy | quote }}
  {{- /* cp -R, not -a: the copier is not root and the volume's directory is not its own, so
         it cannot keep the owner, times or mode of that directory (it would say so, once a file) */}}
  command: ["/bin/sh", "-c", {{ printf "cp -R %s/. %s/" .Values.installFromImage.sourceDir .Values.sparkprof.installDir | quote }}]
  volumeMounts:
    - {name: sparkprof, mountPath: {{ .Values.sparkprof.installDir | quote }}}
  resources:
    {{- toYaml .Values.installFromImage.resources | nindent 4 }}
  {{- with .Values.installFromImage.securityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/* Init container + volume that copy the sparkprof files into installDir. */}}
{{- define "sparkprof.installFromImage" -}}
initContainers:
  {{- include "sparkprof.filesInitContainer" . | nindent 2 }}
volumes:
  - {name: sparkprof, emptyDir: {}}
{{- end -}}

{{/* The Spark Connect server's configuration: the Spark configuration plus its own keys. */}}
{{- define "sparkprof.connectConf" -}}
{{- $v := .Values -}}
{{- $conf := include "sparkprof.sparkConf" . | fromYaml -}}
{{- $_ := set $conf "spark.master" (toString $v.sparkConnect.master) -}}
{{- $_ := set $conf "spark.connect.grpc.binding.port" (toString (int64 $v.sparkConnect.port)) -}}
{{- if $v.monitoring.openTelemetry.enabled -}}
{{- $_ := set $conf "spark.connect.grpc.interceptor.classes" "io.sparkprof.connect.TraceparentInterceptor" -}}
{{- end -}}
{{- range $key, $value := $v.sparkConnect.extraConf -}}
{{- $_ := set $conf $key (toString $value) -}}
{{- end -}}
{{- toYaml $conf -}}
{{- end -}}
