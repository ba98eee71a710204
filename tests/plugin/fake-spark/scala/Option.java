package scala;

/**
 * Test stand-in for {@code scala.Option}: {@link #apply} (Some, or None for null) and {@link
 * #empty}, the static forwarders Scala's companion object has too.
 */
public abstract class Option<A> {
  public static <A> Option<A> apply(A value) {
    return value == null ? None$.<A>none() : new Some<>(value);
  }

  public static <A> Option<A> empty() {
    return None$.<A>none();
  }

  public abstract A get();

  public abstract boolean isEmpty();

  public boolean isDefined() {
    return !isEmpty();
  }
}
