#include "jni/java_exceptions.h"

namespace sparkprof::jni {

void ThrowJava(JNIEnv* env, const char* class_name, const std::string& message) {
  if (env->ExceptionCheck()) return;
  jclass exception = env->FindClass(class_name);
  if (exception != nullptr) env->ThrowNew(exception, message.c_str());
}

}  // namespace sparkprof::jni
