package scala;

import java.util.NoSuchElementException;

/** Test stand-in for {@code scala.None}. */
public final class None$ extends Option<Object> {
  public static final None$ MODULE$ = new None$();

  private None$() {}

  @SuppressWarnings("unchecked")
  static <A> Option<A> none() {
    return (Option<A>) (Option<?>) MODULE$;
  }

  @Override
  public Object get() {
    throw new NoSuchElementException("None.get");
  }

  @Override
  public boolean isEmpty() {
    return true;
  }

  @Override
  public String toString() {
    return "None";
  }
}
