package scala.collection;

import java.util.ArrayList;
import java.util.List;

/**
 * Test-only Scala collection: a Seq (or a Map, as an Iterable of Tuple2) backed by a Java list.
 * It implements only {@code iterator()}, the one member the plugin calls.
 */
public final class FakeSeq<A> implements Iterable<A> {
  private final List<A> items;

  @SafeVarargs
  public FakeSeq(A... items) {
    this.items = new ArrayList<>();
    for (A item : items) this.items.add(item);
  }

  public FakeSeq(List<A> items) {
    this.items = new ArrayList<>(items);
  }

  @Override
  public Iterator<A> iterator() {
    final java.util.Iterator<A> it = items.iterator();
    return new Iterator<A>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public A next() {
        return it.next();
      }
    };
  }
}
