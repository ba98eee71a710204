package io.sparkprof.connect;

import java.util.regex.Pattern;
import org.apache.spark.SparkContext;
import org.sparkproject.connect.grpc.ForwardingServerCallListener;
import org.sparkproject.connect.grpc.Metadata;
import org.sparkproject.connect.grpc.ServerCall;
import org.sparkproject.connect.grpc.ServerCallHandler;
import org.sparkproject.connect.grpc.ServerInterceptor;

/**
 * Spark Connect server interceptor ({@code
 * spark.connect.grpc.interceptor.classes=io.sparkprof.connect.TraceparentInterceptor}): a request
 * carrying a W3C {@code traceparent} header runs its jobs under that parent. While the request's
 * handler runs on the gRPC thread, the header is the {@code sparkprof.traceparent} local property
 * of the SparkContext; the execution thread Spark Connect starts from the handler inherits it, so
 * every job of the request carries it, and the driver's trace export ({@code
 * spark.sparkprof.otel.enabled}) parents those jobs' spans to the caller's span.
 *
 * <p>Compiled against the gRPC that Spark Connect shades ({@code org.sparkproject.connect.grpc},
 * the same package in Spark 3.5 and 4). A header that is not a well-formed traceparent is
 * ignored; the interceptor never fails a request.
 */
public final class TraceparentInterceptor implements ServerInterceptor {
  /** The local property the driver's trace export reads from each JobStart. */
  public static final String PROPERTY = "sparkprof.traceparent";

  private static final Metadata.Key<String> TRACEPARENT =
      Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);
  /** version-traceid-parentid-flags; the export checks the ids themselves. */
  private static final Pattern FORM =
      Pattern.compile("[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    String header = null;
    try {
      header = headers.get(TRACEPARENT);
    } catch (RuntimeException e) {
      // a malformed header: no parent
    }
    final String traceparent =
        header != null && FORM.matcher(header.trim()).matches() ? header.trim() : null;
    if (traceparent == null) return next.startCall(call, headers);
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<Q>(
        withProperty(traceparent, () -> next.startCall(call, headers))) {
      @Override
      public void onMessage(Q message) {
        withProperty(traceparent, () -> {
          super.onMessage(message);
          return null;
        });
      }

      @Override
      public void onHalfClose() {
        withProperty(traceparent, () -> {
          super.onHalfClose();
          return null;
        });
      }
    };
  }

  private interface Body<T> {
    T run();
  }

  /** Runs body with the property set on this thread, then restores what was there. */
  private static <T> T withProperty(String traceparent, Body<T> body) {
    SparkContext context = activeContext();
    if (context == null) return body.run();
    String previous = context.getLocalProperty(PROPERTY);
    context.setLocalProperty(PROPERTY, traceparent);
    try {
      return body.run();
    } finally {
      context.setLocalProperty(PROPERTY, previous);
    }
  }

  private static SparkContext activeContext() {
    try {
      return SparkContext.getOrCreate();
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }
}
