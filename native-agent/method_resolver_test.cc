#include "native-agent/method_resolver.h"

#include <gtest/gtest.h>

namespace sparkprof::agent {
namespace {

TEST(MethodResolverTest, ClassNamesFromJvmtiSignatures) {
  EXPECT_EQ(ClassNameFromSignature("Ljava/io/ObjectOutputStream;"), "java.io.ObjectOutputStream");
  EXPECT_EQ(
      ClassNameFromSignature("Lorg/apache/spark/sql/execution/datasources/FileScanRDD$$anon$1;"),
      "org.apache.spark.sql.execution.datasources.FileScanRDD$$anon$1");
  // Hidden classes (lambdas, LambdaForms) lose their per-run address suffix.
  EXPECT_EQ(ClassNameFromSignature("LAgentWorkloads$$Lambda$14.0x0000000800c0b3c8;"),
            "AgentWorkloads$$Lambda$14");
  EXPECT_EQ(ClassNameFromSignature("Ljava/lang/invoke/LambdaForm$MH+0x0000000800c01000;"),
            "java.lang.invoke.LambdaForm$MH");
  EXPECT_EQ(ClassNameFromSignature("[I"), "[I");
}

}  // namespace
}  // namespace sparkprof::agent
