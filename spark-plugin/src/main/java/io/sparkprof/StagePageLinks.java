package io.sparkprof;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.EnumSet;
import org.apache.spark.ui.SparkUI;

/**
 * A link from Spark's own stage page ({@code stages/stage/?id=N&attempt=M}) to the stage's flame
 * graph in the sparkprof tab ({@code sparkprof/?stage=N&attempt=M}), live and in the History
 * Server.
 *
 * <p>Spark's UI has no extension point on the stage page, so a servlet filter is put on that
 * page's own handler (the one {@code StagesTab} attached, found by its context path ending in
 * {@code /stages/stage}), after Spark's security filter (the view ACLs and {@code
 * spark.ui.filters} run first, as for every page). For an HTML answer with status 200 it inserts
 * one paragraph after the page's title ({@code Details for Stage ...</h3>}); anything else (another content type, an
 * error, a page without the title, a failure of the filter itself) passes unchanged. Why this and
 * not {@code spark.ui.filters}: a filter named there must be one class for one servlet API, set by
 * every user in every application's configuration; Spark 3.5 runs {@code javax.servlet} and Spark 4
 * {@code jakarta.servlet}. Here the filter and the response wrapper are {@link Proxy} instances of
 * whichever API this Spark's Jetty takes (found from its {@code FilterHolder}), added by the
 * plugin itself. The page is written by Spark through {@code getWriter()} (its {@code
 * JettyUtils.createServletHandler}); an answer written to {@code getOutputStream()} passes
 * through untouched.
 */
final class StagePageLinks {
  private StagePageLinks() {}

  /** The stage page's context path ends with this (under the UI's base path). */
  private static final String STAGE_PAGE = "/stages/stage";
  /** The start of the stage page's title (Spark's StagePage). */
  private static final String STAGE_TITLE = "Details for Stage ";

  /**
   * Adds the filter to {@code ui}'s stage page; false (and nothing changed) when this Spark has
   * no such handler or its Jetty does not take a filter the way this expects.
   */
  static boolean attach(SparkUI ui) {
    try {
      Object list = ui.getClass().getMethod("getHandlers").invoke(ui);
      scala.collection.Iterator<?> handlers = ((scala.collection.Iterable<?>) list).iterator();
      while (handlers.hasNext()) {
        Object handler = handlers.next();
        Object path = handler.getClass().getMethod("getContextPath").invoke(handler);
        if (path instanceof String && ((String) path).endsWith(STAGE_PAGE)) {
          addFilter(handler);
          return true;
        }
      }
    } catch (InvocationTargetException e) {
      Log.warn("ui: no link from Spark's stage page to sparkprof (" + e.getCause() + ")");
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      Log.warn("ui: no link from Spark's stage page to sparkprof (" + e + ")");
    }
    return false;
  }

  /** {@code handler.addFilter(new FilterHolder(filter), "/*", EnumSet.allOf(DispatcherType))}. */
  private static void addFilter(Object handler) throws ReflectiveOperationException {
    ClassLoader loader = handler.getClass().getClassLoader();
    String jetty = handler.getClass().getPackage().getName();  // ...jetty.servlet or ...ee10.servlet
    Class<?> holderClass = Class.forName(jetty + ".FilterHolder", true, loader);
    Constructor<?> holderConstructor = null;
    Class<?> filterInterface = null;
    for (Constructor<?> constructor : holderClass.getConstructors()) {
      Class<?>[] parameters = constructor.getParameterTypes();
      if (parameters.length == 1 && parameters[0].isInterface()
          && parameters[0].getName().endsWith("servlet.Filter")) {
        holderConstructor = constructor;
        filterInterface = parameters[0];
      }
    }
    if (holderConstructor == null) {
      throw new IllegalStateException(holderClass.getName() + " takes no Filter");
    }
    String api = filterInterface.getPackage().getName();  // javax.servlet or jakarta.servlet
    Class<?> responseInterface = Class.forName(api + ".http.HttpServletResponse", true,
        filterInterface.getClassLoader());
    Class<?> requestInterface = Class.forName(api + ".ServletRequest", true,
        filterInterface.getClassLoader());
    Class<?> chainInterface = Class.forName(api + ".FilterChain", true,
        filterInterface.getClassLoader());
    @SuppressWarnings({"unchecked", "rawtypes"})
    Class<Enum> dispatcherType = (Class<Enum>) Class.forName(api + ".DispatcherType", true,
        filterInterface.getClassLoader());
    Object filter = Proxy.newProxyInstance(filterInterface.getClassLoader(),
        new Class<?>[] {filterInterface},
        new LinkFilter(responseInterface, requestInterface, chainInterface));
    Object holder = holderConstructor.newInstance(filter);
    @SuppressWarnings("unchecked")
    EnumSet<?> dispatches = EnumSet.allOf(dispatcherType);
    Method add = handler.getClass().getMethod("addFilter", holderClass, String.class,
        EnumSet.class);
    add.invoke(handler, holder, "/*", dispatches);
    // A handler already started (the live UI is bound before plugins start) does not start a
    // filter added afterwards: start it here, as Jetty would have. One not started yet (the
    // History Server's, before it serves the application) starts its filters itself.
    boolean handlerStarted = Boolean.TRUE.equals(
        handler.getClass().getMethod("isStarted").invoke(handler));
    Object started = holder.getClass().getMethod("isStarted").invoke(holder);
    if (handlerStarted && !Boolean.TRUE.equals(started)) {
      holder.getClass().getMethod("start").invoke(holder);
      try {
        holder.getClass().getMethod("initialize").invoke(holder);
      } catch (NoSuchMethodException e) {
        // started is enough in this Jetty
      }
    }
  }

  /**
   * The page with the link after its title ({@code <h3>Details for Stage N (Attempt M)</h3>} in
   * Spark 3.5 and 4; the same text is in the page's {@code <title>}, and Spark 4.2's page has
   * another h3 before it, in its hidden loading overlay);
   * the page unchanged without that title.
   */
  static String withLink(String html, String stageId, String attempt) {
    // The title's text is in <title> too: the one that an </h3> ends.
    int title = -1;
    for (int at = html.indexOf(STAGE_TITLE); at >= 0 && title < 0;
        at = html.indexOf(STAGE_TITLE, at + 1)) {
      int end = html.indexOf('<', at);
      if (end >= 0 && html.startsWith("</h3>", end)) title = end;
    }
    if (title < 0 || !stageId.matches("\\d{1,9}") || !attempt.matches("\\d{1,9}")) return html;
    String link = "<p id=\"sparkprof-stage-link\"><a href=\"../../" + SparkProfUi.PREFIX
        + "/?stage=" + stageId + "&amp;attempt=" + attempt + "\">sparkprof: this stage's flame "
        + "graph, findings and diff</a></p>";
    int at = title + "</h3>".length();
    return html.substring(0, at) + link + html.substring(at);
  }

  /** The filter, for either servlet API: every call by name. */
  private static final class LinkFilter implements InvocationHandler {
    private final Class<?> responseInterface;
    private final Class<?> requestInterface;
    private final Class<?> chainInterface;

    LinkFilter(Class<?> responseInterface, Class<?> requestInterface, Class<?> chainInterface) {
      this.responseInterface = responseInterface;
      this.requestInterface = requestInterface;
      this.chainInterface = chainInterface;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      switch (method.getName()) {
        case "doFilter":
          doFilter(args[0], args[1], args[2]);
          return null;
        case "init":
        case "destroy":
          return null;
        case "hashCode":
          return System.identityHashCode(proxy);
        case "equals":
          return proxy == args[0];
        case "toString":
          return "sparkprof stage page link filter";
        default:
          return null;
      }
    }

    private void doFilter(Object request, Object response, Object chain) throws Throwable {
      Method next = chainInterface.getMethod("doFilter", requestInterface,
          Class.forName(requestInterface.getPackage().getName() + ".ServletResponse", false,
              requestInterface.getClassLoader()));
      if (!responseInterface.isInstance(response)) {
        invoke(next, chain, request, response);
        return;
      }
      StringWriter captured = new StringWriter();
      PrintWriter writer = new PrintWriter(captured);
      CapturingResponse capturing = new CapturingResponse(response, writer);
      Object wrapped = Proxy.newProxyInstance(responseInterface.getClassLoader(),
          new Class<?>[] {responseInterface}, capturing);
      invoke(next, chain, request, wrapped);
      writer.flush();
      String html = captured.toString();
      if (!capturing.usedWriter) return;  // written to the stream, or nothing: passed through
      try {
        Object status = responseInterface.getMethod("getStatus").invoke(response);
        Object type = responseInterface.getMethod("getContentType").invoke(response);
        if (Integer.valueOf(200).equals(status) && type != null
            && type.toString().startsWith("text/html")) {
          String id = parameter(request, "id");
          String attempt = parameter(request, "attempt");
          if (id != null) html = withLink(html, id, attempt == null ? "0" : attempt);
        }
      } catch (ReflectiveOperationException | RuntimeException e) {
        // the page as Spark wrote it
      }
      PrintWriter out = (PrintWriter) responseInterface.getMethod("getWriter").invoke(response);
      out.write(html);
      out.flush();
    }

    private String parameter(Object request, String name) throws ReflectiveOperationException {
      Object value = requestInterface.getMethod("getParameter", String.class)
          .invoke(request, name);
      return value == null ? null : value.toString().trim();
    }

    private static void invoke(Method method, Object target, Object... args) throws Throwable {
      try {
        method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }

  /** The response, but its writer collects the page for the filter. */
  private static final class CapturingResponse implements InvocationHandler {
    private final Object response;
    private final PrintWriter writer;
    volatile boolean usedWriter;

    CapturingResponse(Object response, PrintWriter writer) {
      this.response = response;
      this.writer = writer;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      if (name.equals("getWriter")) {
        usedWriter = true;
        return writer;
      }
      if (name.equals("flushBuffer") && usedWriter) return null;  // written after the filter
      if (name.equals("setContentLength") || name.equals("setContentLengthLong")) {
        return null;  // the page grows: its length is the container's to count
      }
      try {
        return method.invoke(response, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }
}
