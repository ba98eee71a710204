package scala;

/** Test stand-in for {@code scala.Some}. */
public final class Some<A> extends Option<A> {
  private final A value;

  public Some(A value) {
    this.value = value;
  }

  @Override
  public A get() {
    return value;
  }

  @Override
  public boolean isEmpty() {
    return false;
  }

  @Override
  public String toString() {
    return "Some(" + value + ")";
  }
}
