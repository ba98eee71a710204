package io.sparkprof;

/**
 * A small JSON writer for one event-log line. Output is ASCII only: control characters, quotes,
 * backslashes and every character above 0x7E are escaped ({@code \\uXXXX}, surrogate pairs as two
 * escapes, a lone surrogate as U+FFFD), so hostile application, job or stage names can neither break the line nor arrive
 * mangled through JNI's modified UTF-8. A null string is written as an empty string (the
 * engine's parser wants a string where Spark writes one).
 */
final class JsonLine {
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private final StringBuilder out = new StringBuilder(256);
  /** One flag per open container: true until its first member is written. */
  private final boolean[] first = new boolean[64];
  private int depth = -1;

  JsonLine beginObject() {
    comma();
    out.append('{');
    push();
    return this;
  }

  JsonLine endObject() {
    out.append('}');
    depth--;
    return this;
  }

  JsonLine beginArray() {
    comma();
    out.append('[');
    push();
    return this;
  }

  JsonLine endArray() {
    out.append(']');
    depth--;
    return this;
  }

  /** A member name; the value follows with one of the value methods or begin*. */
  JsonLine key(String name) {
    comma();
    quote(name);
    out.append(':');
    first[depth] = true;  // the value that follows needs no comma
    return this;
  }

  JsonLine value(String text) {
    comma();
    quote(text);
    return this;
  }

  JsonLine value(long number) {
    comma();
    out.append(number);
    return this;
  }

  JsonLine value(boolean flag) {
    comma();
    out.append(flag);
    return this;
  }

  JsonLine field(String name, String text) {
    return key(name).value(text);
  }

  JsonLine field(String name, long number) {
    return key(name).value(number);
  }

  JsonLine field(String name, boolean flag) {
    return key(name).value(flag);
  }

  @Override
  public String toString() {
    return out.toString();
  }

  private void push() {
    if (depth + 1 >= first.length) throw new IllegalStateException("JSON nested too deeply");
    first[++depth] = true;
  }

  private void comma() {
    if (depth < 0) return;
    if (first[depth]) {
      first[depth] = false;
    } else {
      out.append(',');
    }
  }

  private void quote(String text) {
    out.append('"');
    if (text != null) {
      for (int i = 0; i < text.length(); i++) {
        char c = text.charAt(i);
        if (c == '"' || c == '\\') {
          out.append('\\').append(c);
        } else if (c >= 0x20 && c < 0x7f) {
          out.append(c);
        } else if (c == '\n') {
          out.append("\\n");
        } else if (c == '\t') {
          out.append("\\t");
        } else if (c == '\r') {
          out.append("\\r");
        } else if (Character.isHighSurrogate(c) && i + 1 < text.length()
            && Character.isLowSurrogate(text.charAt(i + 1))) {
          escape(c);
          escape(text.charAt(++i));
        } else {
          escape(Character.isSurrogate(c) ? '\ufffd' : c);  // a lone half is not valid JSON
        }
      }
    }
    out.append('"');
  }

  private void escape(char c) {
    out.append("\\u").append(HEX[(c >> 12) & 0xf]).append(HEX[(c >> 8) & 0xf])
        .append(HEX[(c >> 4) & 0xf]).append(HEX[c & 0xf]);
  }
}
