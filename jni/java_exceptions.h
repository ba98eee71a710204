// The one place an error of either JNI side (sparkprof_jni.cc, sparkprof_driver_jni.cc) becomes a
// Java exception.
#pragma once

#include <jni.h>

#include <string>

namespace sparkprof::jni {

// Throws `class_name` (JNI form, e.g. "java/lang/IllegalStateException") with `message`, unless
// an exception is already pending (the first one wins; a failed FindClass leaves its own).
void ThrowJava(JNIEnv* env, const char* class_name, const std::string& message);

}  // namespace sparkprof::jni
