package scala.collection;

/** Compile-only declaration: {@code trait scala.collection.Iterator} (same in 2.12 and 2.13). */
public interface Iterator<A> {
  boolean hasNext();

  A next();
}
