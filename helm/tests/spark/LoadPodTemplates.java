// Loads pod template files the way spark-submit --master k8s:// does (Spark's own
// KubernetesUtils.loadPodFromTemplate, which parses with the fabric8 client Spark ships and picks
// the Spark container by name) and prints what Spark made of each as JSON: the pod, and the
// container Spark will run its driver or executor in. Compiled and run against each Spark release
// by helm/tests/spark_pod_templates_test.py.
// Usage: java -cp <spark jars>:. LoadPodTemplates FILE CONTAINER_NAME [FILE CONTAINER_NAME]...
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.apache.spark.SparkConf;
import org.apache.spark.deploy.k8s.KubernetesUtils;
import org.apache.spark.deploy.k8s.SparkPod;

public final class LoadPodTemplates {
  public static void main(String[] args) {
    // The client is only a parser here: nothing connects to an API server.
    try (KubernetesClient client = new KubernetesClientBuilder().build()) {
      StringBuilder out = new StringBuilder("{");
      for (int i = 0; i + 1 < args.length; i += 2) {
        SparkPod pod = KubernetesUtils.loadPodFromTemplate(
            client, args[i], scala.Option.apply(args[i + 1]), new SparkConf(false));
        if (i > 0) out.append(',');
        out.append(Serialization.asJson(args[i])).append(":{\"pod\":")
            .append(Serialization.asJson(pod.pod())).append(",\"container\":")
            .append(Serialization.asJson(pod.container())).append('}');
      }
      System.out.println(out.append('}'));
    }
  }
}
