package io.sparkprof;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.exporter.logging.LoggingSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The OpenTelemetry SDK (shaded into the jar under io.sparkprof.shaded) as {@code
 * spark.sparkprof.otel.*} configures it: the SDK's own autoconfiguration reads the standard
 * {@code OTEL_*} environment variables and {@code otel.*} system properties, our defaults sit
 * below them and the Spark keys that are set sit above them. Traces only: metrics and logs go
 * to Prometheus and the driver log.
 */
final class TracingSdk {
  /** The SDK's own loggers (relocated names): quiet, the plugin logs one line per export. */
  private static final Logger SDK_LOGGER = Logger.getLogger(sdkLoggerName());
  /** Except the logging exporter's, whose output is the point of exporterType=logging. */
  private static final Logger LOGGING_EXPORTER_LOGGER =
      Logger.getLogger(LoggingSpanExporter.class.getName());

  private TracingSdk() {}

  private static String sdkLoggerName() {
    String name = OpenTelemetry.class.getName();  // <prefix>io.opentelemetry.api.OpenTelemetry
    return name.substring(0, name.length() - ".api.OpenTelemetry".length());
  }

  /** The SDK, where it sends spans (in words) and how many it got through. */
  static final class Built {
    final OpenTelemetrySdk sdk;
    final String destination;
    final CountingExporter counts;

    Built(OpenTelemetrySdk sdk, String destination, CountingExporter counts) {
      this.sdk = sdk;
      this.destination = destination;
      this.counts = counts;
    }
  }

  /**
   * Counts the spans the exporter delivered, those it failed to, and those whose export has not
   * ended yet (OTLP retries an unreachable collector in the background; a flush of the span
   * processor succeeds all the same): the log line says which.
   */
  static final class CountingExporter implements SpanExporter {
    private volatile SpanExporter delegate;
    final AtomicLong exported = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicLong pending = new AtomicLong();

    CountingExporter() {}

    CountingExporter(SpanExporter delegate) {
      this.delegate = delegate;
    }

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
      final int count = spans.size();
      pending.addAndGet(count);  // before: the result may be complete when export returns
      final CompletableResultCode result;
      try {
        result = delegate.export(spans);
      } catch (RuntimeException e) {
        pending.addAndGet(-count);
        failed.addAndGet(count);
        throw e;
      }
      result.whenComplete(() -> {
        (result.isSuccess() ? exported : failed).addAndGet(count);
        pending.addAndGet(-count);
      });
      return result;
    }

    /**
     * Whether the spans of a trace went out: the flush succeeded, no export failed or is still
     * under way, and some were delivered (fewer than emitted when a Spark Connect request's own
     * parent was not sampled; none at all is not an export).
     */
    boolean delivered(boolean flushed, int emitted) {
      return flushed && failed.get() == 0 && pending.get() == 0
          && (exported.get() > 0 || emitted == 0);
    }

    @Override
    public CompletableResultCode flush() {
      return delegate.flush();
    }

    @Override
    public CompletableResultCode shutdown() {
      return delegate.shutdown();
    }
  }

  /**
   * Builds the SDK, its span ids from {@code ids}; throws (a RuntimeException) when the OTEL_*
   * settings do not parse.
   */
  static Built build(final SparkProfConfig config, final IdGenerator ids) {
    SDK_LOGGER.setLevel(Level.OFF);
    LOGGING_EXPORTER_LOGGER.setLevel(Level.INFO);
    final Map<String, String> defaults = new HashMap<>();
    defaults.put("otel.traces.exporter", "otlp");
    defaults.put("otel.service.name", "spark");
    defaults.put("otel.bsp.max.queue.size", Integer.toString(config.otelMaxSpans()));
    defaults.put("otel.bsp.max.export.batch.size", "512");
    defaults.put("otel.bsp.export.timeout", config.otelExportTimeoutMs() + "ms");
    final Map<String, String> overrides = overrides(config);
    final String[] destination = {""};
    final CountingExporter counts = new CountingExporter();
    OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
        .addPropertiesSupplier(() -> defaults)
        .addPropertiesCustomizer(properties -> {
          destination[0] = describe(overrides, properties);
          return overrides;
        })
        .addTracerProviderCustomizer((builder, properties) -> builder.setIdGenerator(ids))
        .addSpanExporterCustomizer((exporter, properties) -> {
          counts.delegate = exporter;
          return counts;
        })
        .setServiceClassLoader(TracingSdk.class.getClassLoader())
        .disableShutdownHook()
        .build()
        .getOpenTelemetrySdk();
    return new Built(sdk, destination[0], counts);
  }

  /** The Spark keys that are set, as the SDK's property names; they win over OTEL_*. */
  static Map<String, String> overrides(SparkProfConfig config) {
    Map<String, String> overrides = new HashMap<>();
    overrides.put("otel.metrics.exporter", "none");
    overrides.put("otel.logs.exporter", "none");
    if (!config.otelServiceName().isEmpty()) {
      overrides.put("otel.service.name", config.otelServiceName());
    }
    String exporter = config.otelExporterType();
    if (exporter.equals("logging")) exporter = "console";
    if (!exporter.isEmpty()) overrides.put("otel.traces.exporter", exporter);
    if (!Double.isNaN(config.otelSamplingRatio())) {
      overrides.put("otel.traces.sampler", "parentbased_traceidratio");
      overrides.put("otel.traces.sampler.arg", Double.toString(config.otelSamplingRatio()));
    }
    if (!config.otelProtocol().isEmpty()) {
      String protocol = config.otelProtocol().equals("http") ? "http/protobuf" : "grpc";
      overrides.put("otel.exporter.otlp.protocol", protocol);
      overrides.put("otel.exporter.otlp.traces.protocol", protocol);
    }
    if (!config.otelEndpoint().isEmpty()) {
      String endpoint = config.otelEndpoint();
      overrides.put("otel.exporter.otlp.endpoint", endpoint);
      // The signal's own key takes the full URL for HTTP; it also beats an
      // OTEL_EXPORTER_OTLP_TRACES_ENDPOINT in the environment, as a set Spark key should.
      if (config.otelProtocol().equals("http") && !endpoint.endsWith("/v1/traces")) {
        endpoint = (endpoint.endsWith("/") ? endpoint : endpoint + "/") + "v1/traces";
      }
      overrides.put("otel.exporter.otlp.traces.endpoint", endpoint);
    }
    return overrides;
  }

  /** "grpc http://host:4317" for the log line, from the settings the SDK was built with. */
  private static String describe(Map<String, String> overrides, ConfigProperties properties) {
    String exporter = setting(overrides, properties, "otel.traces.exporter", "otlp");
    if (!exporter.equals("otlp")) return "the " + exporter + " exporter";
    String protocol = setting(overrides, properties, "otel.exporter.otlp.traces.protocol",
        setting(overrides, properties, "otel.exporter.otlp.protocol", "grpc"));
    String endpoint = setting(overrides, properties, "otel.exporter.otlp.traces.endpoint",
        setting(overrides, properties, "otel.exporter.otlp.endpoint", "the SDK's default"));
    return "OTLP " + protocol + " to " + endpoint;
  }

  private static String setting(Map<String, String> overrides, ConfigProperties properties,
      String key, String fallback) {
    String value = overrides.get(key);
    return value != null ? value : properties.getString(key, fallback);
  }

  /**
   * The remote parent a W3C {@code traceparent} names, or null when the value is empty or not a
   * valid traceparent.
   */
  static Context parentOf(String traceparent) {
    if (traceparent == null || traceparent.trim().isEmpty()) return null;
    Map<String, String> carrier =
        Collections.singletonMap("traceparent", traceparent.trim().toLowerCase(Locale.ROOT));
    Context context = W3CTraceContextPropagator.getInstance().extract(
        Context.root(), carrier, MapGetter.INSTANCE);
    SpanContext parent = Span.fromContext(context).getSpanContext();
    return parent.isValid() && parent.isRemote() ? context : null;
  }

  private enum MapGetter implements TextMapGetter<Map<String, String>> {
    INSTANCE;

    @Override
    public String get(Map<String, String> carrier, String key) {
      return carrier == null ? null : carrier.get(key);
    }
  }
}
