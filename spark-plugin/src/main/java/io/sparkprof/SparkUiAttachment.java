package io.sparkprof;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.apache.spark.SparkConf;
import org.apache.spark.ui.JettyUtils;
import org.apache.spark.ui.SparkUI;
import org.apache.spark.ui.SparkUITab;
import org.apache.spark.ui.UIUtils;
import scala.runtime.AbstractFunction0;
import scala.runtime.AbstractFunction1;

/**
 * Puts {@link SparkProfUi} into a Spark UI (the live driver's, or one application's in the
 * History Server) through Spark's own UI machinery, so everything Spark applies to its pages
 * applies to the tab: the handlers come from {@code JettyUtils.createServletHandler} and are
 * attached with {@code WebUI.attachHandler}, which installs Spark's security filter (view ACLs,
 * {@code spark.ui.filters}, the proxy's headers) on them; the page is drawn inside Spark's header
 * ({@code UIUtils.headerSparkPage}), with the tab in its navigation bar ({@code attachTab}).
 *
 * <p>Those members are the same by name in Spark 3.5 and 4 but not in bytecode: Spark 3.5 takes
 * {@code javax.servlet} requests and Jetty 9's handler class, Spark 4.2 {@code jakarta.servlet}
 * and Jetty 12's ({@code org.sparkproject.jetty.ee10.servlet.ServletContextHandler}), and
 * {@code Seq} is {@code scala.collection.Seq} under Scala 2.12 but {@code
 * scala.collection.immutable.Seq} under 2.13. So they are found by name and called by reflection,
 * and a request is only ever an Object here ({@link #parameter}). {@code attachTab} and the tab's
 * constructor link directly (same bytecode in both).
 */
final class SparkUiAttachment {
  private SparkUiAttachment() {}

  /** The tab in Spark's navigation bar; its pages are the handlers attached beside it. */
  static final class SparkProfTab extends SparkUITab {
    SparkProfTab(SparkUI ui) {
      super(ui, SparkProfUi.PREFIX);
    }

    @Override
    public String name() {
      return SparkProfUi.PREFIX;
    }
  }

  /**
   * Attaches the tab and its four handlers to {@code ui}. Throws (a ReflectiveOperationException
   * wrapped in IllegalStateException, or a LinkageError) when this Spark's UI does not have the
   * members; the caller logs it and runs on without the tab.
   */
  static void attach(SparkUI ui, final SparkProfUi content) {
    final SparkProfTab tab = new SparkProfTab(ui);
    SparkConf conf = ui.conf();
    String basePath = ui.getBasePath();
    String root = "/" + SparkProfUi.PREFIX;
    Object page = handler(root, "text/html", request -> page(request, tab, content), conf,
        basePath);
    Object data = handler(root + "/data", "application/json", request -> content.dataJson(),
        conf, basePath);
    Object flameGraph = handler(root + "/flamegraph", "text/html",
        request -> withCspNonce(
            content.flameGraph(parameter(request, "stage"), parameter(request, "attempt"))),
        conf, basePath);
    Object diff = handler(root + "/diff", "text/html",
        request -> withCspNonce(content.stageDiff(parameter(request, "before"),
            parameter(request, "beforeAttempt"), parameter(request, "after"),
            parameter(request, "afterAttempt"))),
        conf, basePath);
    attachHandler(ui, page);
    attachHandler(ui, data);
    attachHandler(ui, flameGraph);
    attachHandler(ui, diff);
    ui.attachTab(tab);
    StagePageLinks.attach(ui);  // Spark's stage page links to the stage's flame graph here
  }

  /** What a handler answers for one request: a String, or Spark's page nodes. */
  interface Responder {
    Object respond(Object request);
  }

  /** {@code JettyUtils.createServletHandler(path, new ServletParams(...), conf, basePath)}. */
  private static Object handler(String path, String contentType, final Responder responder,
      SparkConf conf, String basePath) {
    try {
      Class<?> paramsClass = Class.forName("org.apache.spark.ui.JettyUtils$ServletParams", true,
          JettyUtils.class.getClassLoader());
      Constructor<?> paramsConstructor = null;
      for (Constructor<?> constructor : paramsClass.getConstructors()) {
        if (constructor.getParameterTypes().length == 3) paramsConstructor = constructor;
      }
      Method create = null;
      for (Method method : JettyUtils.class.getMethods()) {
        Class<?>[] parameters = method.getParameterTypes();
        if (method.getName().equals("createServletHandler") && parameters.length == 4
            && parameters[1] == paramsClass) {
          create = method;
        }
      }
      if (paramsConstructor == null || create == null) {
        throw new IllegalStateException("this Spark's JettyUtils has no createServletHandler "
            + "with ServletParams");
      }
      Object params = paramsConstructor.newInstance(new AbstractFunction1<Object, Object>() {
        @Override
        public Object apply(Object request) {
          return responder.respond(request);
        }
      }, contentType, new AbstractFunction1<Object, Object>() {
        @Override
        public Object apply(Object result) {
          if (result instanceof String) return result;
          return "<!DOCTYPE html>" + result;  // Spark's page nodes, as its html responder does
        }
      });
      return create.invoke(null, path, params, conf, basePath);
    } catch (InvocationTargetException e) {
      throw new IllegalStateException("createServletHandler: " + e.getCause(), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("createServletHandler: " + e, e);
    }
  }

  private static void attachHandler(SparkUI ui, Object handler) {
    for (Method method : ui.getClass().getMethods()) {
      if (method.getName().equals("attachHandler") && method.getParameterTypes().length == 1
          && method.getParameterTypes()[0].isInstance(handler)) {
        try {
          method.invoke(ui, handler);
          return;
        } catch (InvocationTargetException e) {
          throw new IllegalStateException("attachHandler: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException("attachHandler: " + e, e);
        }
      }
    }
    throw new IllegalStateException("this Spark's UI has no attachHandler for "
        + handler.getClass().getName());
  }

  /**
   * Spark 4.2's Content-Security-Policy ({@code spark.ui.contentSecurityPolicy.enabled}) runs only
   * the inline scripts that carry the request's nonce ({@code CspNonce.get()}, set by Spark's
   * security filter before the servlet runs): the tab's and the flame graph page's scripts get
   * it. Without the class (Spark 3.5) or a nonce, the page is unchanged.
   */
  static String withCspNonce(String html) {
    String nonce = cspNonce();
    if (nonce == null || html == null) return html;
    return SCRIPT_TAG.matcher(html).replaceAll("<script nonce=\"" + nonce + "\"");
  }

  private static final java.util.regex.Pattern SCRIPT_TAG =
      java.util.regex.Pattern.compile("<script(?=[\\s>])");
  private static final Method CSP_NONCE = findCspNonce();

  private static Method findCspNonce() {
    try {
      return Class.forName("org.apache.spark.ui.CspNonce", true, UIUtils.class.getClassLoader())
          .getMethod("get");
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return null;  // before Spark 4.2
    }
  }

  private static String cspNonce() {
    if (CSP_NONCE == null) return null;
    try {
      Object nonce = CSP_NONCE.invoke(null);
      if (!(nonce instanceof String)) return null;
      String text = (String) nonce;
      // Spark's nonces are Base64; anything else is not put into the page.
      return !text.isEmpty() && text.matches("[A-Za-z0-9+/=_-]+") ? text : null;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return null;
    }
  }

  /** The page inside Spark's header; the page alone when the header cannot be drawn. */
  private static Object page(Object request, SparkProfTab tab, SparkProfUi content) {
    final String body = withCspNonce(content.pageBody());
    Method header = HEADER_PAGE;
    if (header != null && UNPARSED != null) {
      try {
        Class<?>[] parameters = header.getParameterTypes();
        Object[] arguments = new Object[parameters.length];
        arguments[0] = request;
        arguments[1] = "sparkprof";
        final Object nodes = UNPARSED.newInstance(body);
        arguments[2] = new AbstractFunction0<Object>() {
          @Override
          public Object apply() {
            return nodes;
          }
        };
        arguments[3] = tab;
        for (int i = 4; i < parameters.length; i++) {
          arguments[i] = UIUtils.class.getMethod("headerSparkPage$default$" + (i + 1))
              .invoke(null);
        }
        return header.invoke(null, arguments);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        if (!headerFailureLogged) {
          headerFailureLogged = true;
          Log.warn("ui: the sparkprof tab is drawn without Spark's header (" + e + ")");
        }
      }
    }
    return withCspNonce(content.standalonePage("sparkprof"));
  }

  private static volatile boolean headerFailureLogged;
  private static final Method HEADER_PAGE = findHeaderPage();
  private static final Constructor<?> UNPARSED = findUnparsed();

  private static Method findHeaderPage() {
    try {
      for (Method method : UIUtils.class.getMethods()) {
        Class<?>[] parameters = method.getParameterTypes();
        if (method.getName().equals("headerSparkPage") && parameters.length >= 4
            && parameters[1] == String.class && parameters[3] == SparkUITab.class) {
          return method;
        }
      }
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
    return null;
  }

  private static Constructor<?> findUnparsed() {
    try {
      return Class.forName("scala.xml.Unparsed", true, UIUtils.class.getClassLoader())
          .getConstructor(String.class);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return null;
    }
  }

  /**
   * A query parameter of a request of either servlet API ({@code javax} in Spark 3.5, {@code
   * jakarta} in Spark 4), through the API's own interface method; null when absent.
   */
  static String parameter(Object request, String name) {
    String[] apis = {"jakarta.servlet.ServletRequest", "javax.servlet.ServletRequest"};
    for (String api : apis) {
      try {
        Class<?> requestInterface = Class.forName(api, false, request.getClass().getClassLoader());
        if (!requestInterface.isInstance(request)) continue;
        Object value = requestInterface.getMethod("getParameter", String.class)
            .invoke(request, name);
        return value == null ? null : value.toString();
      } catch (ClassNotFoundException e) {
        continue;
      } catch (ReflectiveOperationException | LinkageError e) {
        return null;
      }
    }
    return null;
  }
}
