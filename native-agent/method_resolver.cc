#include "native-agent/method_resolver.h"

#include "common/utf8.h"

namespace sparkprof::agent {

void PreallocateMethodIds(jvmtiEnv* jvmti, jclass klass) {
  jint count = 0;
  jmethodID* methods = nullptr;
  if (jvmti->GetClassMethods(klass, &count, &methods) == JVMTI_ERROR_NONE && methods != nullptr) {
    jvmti->Deallocate(reinterpret_cast<unsigned char*>(methods));
  }
}

int PreallocateMethodIdsForLoadedClasses(jvmtiEnv* jvmti, JNIEnv* jni) {
  jint count = 0;
  jclass* classes = nullptr;
  if (jvmti->GetLoadedClasses(&count, &classes) != JVMTI_ERROR_NONE) return 0;
  // Every class is a local reference at once (tens of thousands in a running executor, where the
  // plugin starts the agent late); declared, so -Xcheck:jni does not warn. HotSpot refuses more
  // than -XX:MaxJNILocalCapacity (65536) with an OutOfMemoryError: cosmetic here, so dropped.
  if (jni->EnsureLocalCapacity(count) != JNI_OK) jni->ExceptionClear();
  for (jint i = 0; i < count; ++i) {
    jint status = 0;
    if (jvmti->GetClassStatus(classes[i], &status) == JVMTI_ERROR_NONE &&
        (status & JVMTI_CLASS_STATUS_PREPARED) != 0) {
      PreallocateMethodIds(jvmti, classes[i]);
    }
    jni->DeleteLocalRef(classes[i]);
  }
  jvmti->Deallocate(reinterpret_cast<unsigned char*>(classes));
  return count;
}

std::string ClassNameFromSignature(std::string_view signature) {
  if (signature.size() >= 2 && signature.front() == 'L' && signature.back() == ';') {
    signature = signature.substr(1, signature.size() - 2);
  }
  std::string name(signature);
  for (char& c : name) {
    if (c == '/') c = '.';
  }
  // Hidden classes: "<name>.0x<hex>" in JVMTI signatures ("+0x" in some JDK builds).
  size_t suffix = name.find(".0x");
  if (suffix == std::string::npos) suffix = name.find("+0x");
  if (suffix != std::string::npos) name.resize(suffix);
  return name;
}

std::string JvmtiMethodResolver::Resolve(const void* method_id) {
  auto method = static_cast<jmethodID>(const_cast<void*>(method_id));
  if (method == nullptr) return "";
  jclass klass = nullptr;
  if (jvmti_->GetMethodDeclaringClass(method, &klass) != JVMTI_ERROR_NONE || klass == nullptr) {
    return "";
  }
  std::string result;
  char* signature = nullptr;
  char* name = nullptr;
  if (jvmti_->GetClassSignature(klass, &signature, nullptr) == JVMTI_ERROR_NONE &&
      jvmti_->GetMethodName(method, &name, nullptr, nullptr) == JVMTI_ERROR_NONE) {
    // JVMTI's strings are modified UTF-8 (an emoji in an identifier is two surrogates).
    result = utf8::FromModified(ClassNameFromSignature(signature));
    result += '.';
    result += utf8::FromModified(name);
  }
  if (signature != nullptr) jvmti_->Deallocate(reinterpret_cast<unsigned char*>(signature));
  if (name != nullptr) jvmti_->Deallocate(reinterpret_cast<unsigned char*>(name));
  if (jni_ != nullptr) jni_->DeleteLocalRef(klass);
  return result;
}

std::string ThreadName(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread) {
  jvmtiThreadInfo info{};
  if (jvmti->GetThreadInfo(thread, &info) != JVMTI_ERROR_NONE) return "";
  // Modified UTF-8, as every JVMTI string: an emoji in the name is two surrogates.
  std::string name = info.name != nullptr ? utf8::FromModified(info.name) : "";
  if (info.name != nullptr) jvmti->Deallocate(reinterpret_cast<unsigned char*>(info.name));
  if (info.thread_group != nullptr) jni->DeleteLocalRef(info.thread_group);
  if (info.context_class_loader != nullptr) jni->DeleteLocalRef(info.context_class_loader);
  return name;
}

}  // namespace sparkprof::agent
