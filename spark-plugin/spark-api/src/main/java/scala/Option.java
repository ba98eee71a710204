package scala;

/**
 * Compile-only declaration: {@code sealed abstract class Option[+A]} (Scala 2.12 and 2.13 have the
 * same descriptors for these members). Primitive options hold boxed values.
 */
public abstract class Option<A> {
  public abstract A get();

  public abstract boolean isEmpty();

  public boolean isDefined() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
