# SPDX-License-Identifier: GPL-2.0-or-later
# Warnings every target of ours links (PRIVATE), so third-party headers found
# as system includes stay out of them.
add_library(vcpufold_warnings INTERFACE)
target_compile_options(vcpufold_warnings INTERFACE
  -Wall -Wextra -Wconversion -Wsign-conversion -Wshadow
  -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough)
# GCC 12 (Debian 12's) reports -Wrestrict inside libstdc++'s std::string copies
# at -O3 even for `name = "a"` (overlaps of 2^63 bytes at negative offsets):
# false positives from its inliner, not our code. Off for that compiler only.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(vcpufold_warnings INTERFACE -Wno-restrict)
endif()
# Off by default: a packager's compiler (a newer GCC, other flags) may warn
# where this one does not, and that must not fail their build.
# scripts/test.sh turns it on for every configuration it builds.
option(VCPUFOLD_WERROR "Treat compiler warnings as errors" OFF)
if(VCPUFOLD_WERROR)
  target_compile_options(vcpufold_warnings INTERFACE -Werror)
endif()

if(VCPUFOLD_SANITIZE)
  # Applied to every translation unit so containers are instrumented alike.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

if(VCPUFOLD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "VCPUFOLD_FUZZ needs clang++ (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  # Everything is instrumented for coverage; only fuzz targets link the libFuzzer main.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
