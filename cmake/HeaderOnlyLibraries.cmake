# SPDX-License-Identifier: GPL-2.0-or-later
# spdlog, fmt and toml++ compiled into the binaries through their header-only
# modes. Debian 12 and 13 ship these libraries under different sonames, so a
# binary linked to them installs on one release only; built in, the agent
# package depends on nothing beyond libc, libstdc++ and libsystemd, and one
# .deb serves every current Debian guest. Only a few files include them
# (logging set-up, the TOML reader), which keeps the compile cost small.
find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(tomlplusplus REQUIRED)
add_library(vcpufold_header_only_libraries INTERFACE)
# Not spdlog::spdlog_header_only: it links the shared libfmt.
target_compile_definitions(vcpufold_header_only_libraries INTERFACE SPDLOG_FMT_EXTERNAL TOML_HEADER_ONLY=1)
target_include_directories(vcpufold_header_only_libraries SYSTEM INTERFACE
  $<TARGET_PROPERTY:spdlog::spdlog,INTERFACE_INCLUDE_DIRECTORIES>)
target_link_libraries(vcpufold_header_only_libraries INTERFACE fmt::fmt-header-only Threads::Threads)

# toml++ 3.3 (Debian 12) reaches its own TOML_UNREACHABLE on some non-ASCII
# input (a fuzz input: "I#J\ns = 3\ne\xEF\xBB\xAFm= 25"); the compiled library
# Debian ships has the same code, unseen by the sanitizers until it was built
# in. Under the sanitizers the files that include it do not trap on that one
# check, so the fuzzers go on testing the rest; the defect is toml++'s
# (docs/hostd.md, "Faults").
if(VCPUFOLD_SANITIZE OR VCPUFOLD_FUZZ)
  target_compile_options(vcpufold_header_only_libraries INTERFACE -fno-sanitize=unreachable)
endif()
