// Defined over and over in throw-away class loaders by AgentWorkloads' class-churn case, so its
// jmethodIDs go stale when the loaders are collected.
public class ChurnTarget implements java.util.function.IntSupplier {
  @Override
  public int getAsInt() {
    int x = 0;
    for (int i = 0; i < 20_000; i++) x += Integer.bitCount(i * 31 + x);
    return x;
  }
}
