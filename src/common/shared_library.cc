// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/shared_library.h"

#include <dlfcn.h>

namespace kprobectl {

Result<SharedLibrary> SharedLibrary::Open(const std::string& soname, const std::string& needed_by,
                                          const std::string& package) {
  void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) {
    const char* why = dlerror();
    return Fail(needed_by + " needs " + soname + ", which cannot be loaded: " + (why ? why : "unknown error"),
                "install Debian's package " + package + " (apt-get install " + package + ")");
  }
  SharedLibrary out;
  out.handle_ = std::shared_ptr<void>(handle, [](void* h) { dlclose(h); });
  out.soname_ = soname;
  return out;
}

Result<void*> SharedLibrary::Address(const char* name) const {
  dlerror();
  void* address = dlsym(handle_.get(), name);
  if (!address) return Fail(soname_ + " has no function " + name, "a library of another version than the build's");
  return address;
}

}  // namespace kprobectl
