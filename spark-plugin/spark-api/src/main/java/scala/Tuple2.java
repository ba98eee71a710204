package scala;

/** Compile-only declaration: {@code case class Tuple2[+T1, +T2](_1: T1, _2: T2)}. */
public class Tuple2<T1, T2> {
  public T1 _1() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public T2 _2() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
