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

  /**
   * From the two stage attempts' call trees in the driver's memory; when it no longer keeps one of
   * them (past {@code spark.sparkprof.maxStages}, or evicted for the node budget), from the
   * profile file it writes as batches arrive ({@code profile.sparkprof}).
   */
  @Override
  public String stageDiffHtml(int beforeStage, int beforeAttempt, int afterStage,
      int afterAttempt) {
    String html = null;
    try {
      html = NativeAggregator.stageDiffHtml(beforeStage, beforeAttempt, afterStage, afterAttempt);
    } catch (RuntimeException | LinkageError e) {
      html = null;
    }
    java.io.File directory = applicationDirectory;
    if (html == null && directory != null) {
      return new HistoryUiSource(directory, java.util.Collections.<String>emptyList())
          .stageDiffHtml(beforeStage, beforeAttempt, afterStage, afterAttempt);
    }
    if (html == null) {
      throw new IllegalArgumentException("no sparkprof samples in the driver for stage "
          + beforeStage + " attempt " + beforeAttempt + " or stage " + afterStage + " attempt "
          + afterAttempt);
    }
    return html;
  }

  /** The application's output directory, once its id is known; null before. */
  private volatile java.io.File applicationDirectory;

  void setApplicationDirectory(java.io.File directory) {
    applicationDirectory = directory;
  }

  /**
   * From the stage's call tree in memory; for a stage attempt the driver no longer keeps (past
   * {@code spark.sparkprof.maxStages}, or evicted for the node budget), the file written when it
   * completed.
   */
  @Override
  public String flameGraphHtml(int stageId, int stageAttempt) {
    String html = null;
    try {
      html = NativeAggregator.stageFlameGraphHtml(stageId, stageAttempt);
    } catch (RuntimeException | LinkageError e) {
      html = null;
    }
    java.io.File directory = applicationDirectory;
    if (html != null || directory == null) return html;
    return new HistoryUiSource(directory, java.util.Collections.<String>emptyList())
        .flameGraphHtml(stageId, stageAttempt);
  }
}
