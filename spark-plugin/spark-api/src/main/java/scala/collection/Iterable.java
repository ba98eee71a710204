package scala.collection;

/**
 * Compile-only declaration: {@code trait scala.collection.Iterable} (an interface in bytecode).
 * {@code iterator()} has the descriptor {@code ()Lscala/collection/Iterator;} in Scala 2.12
 * and 2.13 (declared by IterableOnce in 2.13), so walking a Seq, Set or Map through this interface
 * links against both. Seq-returning Spark accessors are obtained by reflection and cast to this
 * type.
 */
public interface Iterable<A> {
  Iterator<A> iterator();
}
