import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Many one-record tasks in local mode, so the listener bridge's steady-state cost per event shows
 * (the plugin logs it at the end: "sparkprof: listener: N events forwarded, ... us of CPU").
 * Usage (bench/listener_cost.sh): ListenerCost TASKS_PER_JOB JOBS
 */
public final class ListenerCost {
  public static void main(String[] args) {
    int tasks = Integer.parseInt(args[0]);
    int jobs = Integer.parseInt(args[1]);
    JavaSparkContext sc = new JavaSparkContext(new SparkConf().setAppName("listener-cost"));
    List<Integer> records = new ArrayList<>();
    for (int i = 0; i < tasks; i++) records.add(i);
    long start = System.nanoTime();
    for (int job = 0; job < jobs; job++) sc.parallelize(records, tasks).count();
    System.out.printf("listener-cost: %d jobs of %d tasks in %.1f ms%n", jobs, tasks,
        (System.nanoTime() - start) / 1e6);
    sc.stop();
  }
}
