package scala;

/** Test stand-in for {@code scala.Tuple2}. */
public class Tuple2<T1, T2> {
  private final T1 first;
  private final T2 second;

  public Tuple2(T1 first, T2 second) {
    this.first = first;
    this.second = second;
  }

  public T1 _1() {
    return first;
  }

  public T2 _2() {
    return second;
  }
}
