// A one-DataNode HDFS on loopback with WebHDFS, for python/tests/test_webhdfs.py:
// java MiniDfs DATA_DIR NAMENODE_HTTP_PORT; prints "READY" when it serves, stops when stdin closes.
import java.io.File;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

public class MiniDfs {
  public static void main(String[] args) throws Exception {
    Configuration conf = new Configuration();
    conf.set("dfs.webhdfs.enabled", "true");
    conf.set("dfs.permissions.enabled", "false");
    conf.set("dfs.namenode.http-address", "127.0.0.1:" + args[1]);
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf, new File(args[0]))
        .numDataNodes(1)
        .nameNodeHttpPort(Integer.parseInt(args[1]))
        .build();
    cluster.waitActive();
    System.out.println("READY");
    System.out.flush();
    while (System.in.read() >= 0) {
    }
    cluster.shutdown();
  }
}
