// A real YARN and HDFS on loopback for the Spark-on-YARN tests (tests/e2e/run_yarn_spark.py):
//   java MiniYarn SITE_XML WORK_DIR CONF_DIR
// loads SITE_XML (the yarn-site.xml the test wrote: NodeManager resources, memory checks), starts
// a one-DataNode MiniDFSCluster and a one-NodeManager MiniYARNCluster, writes the clients'
// core-site.xml, hdfs-site.xml and yarn-site.xml (with the ports really bound) into CONF_DIR -- the
// HADOOP_CONF_DIR spark-submit reads -- prints "READY <fs.defaultFS> <webhdfs host:port>" and
// stops when its standard input closes.
import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;

public class MiniYarn {
  public static void main(String[] args) throws Exception {
    File site = new File(args[0]);
    File work = new File(args[1]);
    File confDir = new File(args[2]);

    Configuration dfsConf = new Configuration();
    dfsConf.set("dfs.permissions.enabled", "false");
    dfsConf.set("dfs.webhdfs.enabled", "true");
    dfsConf.set("dfs.namenode.http-address", "127.0.0.1:0");
    dfsConf.set("dfs.datanode.address", "127.0.0.1:0");
    dfsConf.set("dfs.datanode.http.address", "127.0.0.1:0");
    dfsConf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    MiniDFSCluster dfs = new MiniDFSCluster.Builder(dfsConf, new File(work, "hdfs"))
        .numDataNodes(1)
        .build();
    dfs.waitActive();
    String defaultFs = dfs.getFileSystem().getUri().toString();
    FileSystem fs = dfs.getFileSystem();
    // Spark's staging directories (/user/<name>/.sparkStaging) and the event log directory.
    for (String dir : new String[] {"/user", "/eventlog", "/tmp"}) {
      fs.mkdirs(new Path(dir));
      fs.setPermission(new Path(dir), new FsPermission((short) 01777));
    }

    YarnConfiguration yarnConf = new YarnConfiguration();
    yarnConf.addResource(new Path(site.getAbsolutePath()));
    yarnConf.set("fs.defaultFS", defaultFs);
    MiniYARNCluster yarn = new MiniYARNCluster("sparkprof", 1, 1, 1);
    yarn.init(yarnConf);
    yarn.start();
    // The ResourceManager's ports are chosen when it binds (address host:0 until then).
    Configuration running = yarn.getConfig();
    long deadline = System.currentTimeMillis() + 60_000;
    while (running.get(YarnConfiguration.RM_ADDRESS, "").endsWith(":0")) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("the ResourceManager bound no port within 60 s");
      }
      Thread.sleep(100);
    }

    confDir.mkdirs();
    Configuration core = new Configuration(false);
    core.set("fs.defaultFS", defaultFs);
    write(core, new File(confDir, "core-site.xml"));
    Configuration hdfs = new Configuration(false);
    hdfs.set("dfs.replication", "1");
    write(hdfs, new File(confDir, "hdfs-site.xml"));
    Configuration clients = new Configuration(false);
    for (java.util.Map.Entry<String, String> entry : running) {
      if (entry.getKey().startsWith("yarn.")) {
        clients.set(entry.getKey(), entry.getValue());
      }
    }
    write(clients, new File(confDir, "yarn-site.xml"));

    String webHdfs = dfs.getNameNode().getHttpAddress().getHostString() + ":"
        + dfs.getNameNode().getHttpAddress().getPort();
    System.out.println("READY " + defaultFs + " " + webHdfs + " "
        + running.get(YarnConfiguration.RM_WEBAPP_ADDRESS));
    System.out.flush();
    while (System.in.read() >= 0) {
    }
    yarn.stop();
    dfs.shutdown();
  }

  private static void write(Configuration conf, File file) throws Exception {
    try (OutputStream out = new FileOutputStream(file)) {
      conf.writeXml(out);
    }
  }
}
