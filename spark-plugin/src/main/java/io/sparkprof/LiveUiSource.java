package io.sparkprof;

/**
 * The live driver's figures for the sparkprof tab: what the native aggregator keeps already (the
 * live application model and the per-stage call trees), turned into the page's JSON and flame
 * graphs only when a page asks ({@link NativeAggregator#liveUiJson}).
 */
final class LiveUiSource implements SparkProfUi.Source {
  @Override
  public String dataJson() {
    String json = null;
    try {
      json = NativeAggregator.liveUiJson();
    } catch (RuntimeException | LinkageError e) {
      json = null;
    }
    if (json != null) return json;
    return "{\"schema\":\"sparkprof.ui/v1\",\"source\":\"live\",\"report\":null,"
        + "\"message\":\"the sparkprof driver aggregator is not running (see the driver log)\"}";
  }

  @Override
  public String flameGraphHtml(int stageId, int stageAttempt) {
    try {
      return NativeAggregator.stageFlameGraphHtml(stageId, stageAttempt);
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }
}
