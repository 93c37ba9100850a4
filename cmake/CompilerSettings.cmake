# SPDX-License-Identifier: GPL-2.0-or-later
# Warnings every target of ours links (PRIVATE), so third-party headers found
# as system includes stay out of them.
add_library(vcpufold_warnings INTERFACE)
target_compile_options(vcpufold_warnings INTERFACE
  -Wall -Wextra -Werror -Wconversion -Wsign-conversion -Wshadow
  -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough)

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
