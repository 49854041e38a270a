# SPDX-License-Identifier: Apache-2.0
# Packaging tests: the exported symbol set, the public header as strict C99 and as C++, and programs that
# consume the *installed* library the way users do (pkg-config C99, CMake find_package, Fortran
# iso_c_binding, Python ctypes). A test returns 77 (skipped) when a tool it needs is missing. Commands are
# plain `bash` found on PATH (no absolute tool paths), so a build carried to another machine still runs them.
list(JOIN SFFT_EXPORTS " " SFFT_EXPORTS_SPACED)
add_test(NAME abi.exported_symbols
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/consumers/check_exports.sh $<TARGET_FILE:sfft>)
set_tests_properties(abi.exported_symbols PROPERTIES ENVIRONMENT "EXPECTED=${SFFT_EXPORTS_SPACED}")
add_test(NAME abi.soname
         COMMAND bash -c "objdump -p '$<TARGET_FILE:sfft>' | grep -q 'SONAME *libsfft.so.${PROJECT_VERSION_MAJOR}$'")

foreach(kind header_c99 header_cxx pkgconfig_c99 cmake_package fortran python_ctypes)
  add_test(NAME consumer.${kind} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/consumers/run_consumer.sh ${kind})
  set_tests_properties(consumer.${kind} PROPERTIES SKIP_RETURN_CODE 77 RESOURCE_LOCK consumer_install
    ENVIRONMENT "SFFT_SOURCE=${PROJECT_SOURCE_DIR};SFFT_BUILD=${PROJECT_BINARY_DIR};SFFT_INSTALL=${PROJECT_BINARY_DIR}/consumer-install")
endforeach()

# A C99 program built against older and newer copies of the option structs than the library's.
add_executable(abi_old_option_structs abi/old_option_structs.c)
target_link_libraries(abi_old_option_structs PRIVATE sfft::sfft m)
# Linked by the C++ driver: a sanitizer build's libsfft needs UBSan's C++ runtime, which the C driver omits.
set_target_properties(abi_old_option_structs PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF LINKER_LANGUAGE CXX)
add_test(NAME abi.old_option_structs COMMAND abi_old_option_structs)

# Distribution: the installed library on a host without the CUDA libraries (C and ctypes consumers with the
# loader's cache ignored and the CUDA directories left out), the installed CLI from its own prefix and from
# a moved copy of it (relative RUNPATH), and the licence identifiers in every source file.
foreach(kind cpu_only_host installed_cli)
  add_test(NAME consumer.${kind} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/consumers/run_consumer.sh ${kind})
  set_tests_properties(consumer.${kind} PROPERTIES SKIP_RETURN_CODE 77 RESOURCE_LOCK consumer_install
    ENVIRONMENT "SFFT_SOURCE=${PROJECT_SOURCE_DIR};SFFT_BUILD=${PROJECT_BINARY_DIR};SFFT_INSTALL=${PROJECT_BINARY_DIR}/consumer-install;SFFT_HAVE_CUDA=${SFFT_HAVE_CUDA}")
endforeach()
add_test(NAME license.spdx_identifiers COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/consumers/check_spdx.sh
         ${PROJECT_SOURCE_DIR})

sfft_add_gtest(build_info_test build_info_test.cpp)
target_compile_definitions(build_info_test PRIVATE SFFT_TEST_FAMILY_BITS=${SFFT_FAMILY_BITS})

# The Fortran module (fortran/sfft.f90): its interfaces cover every exported symbol, and a Fortran program checks
# the struct layouts and constants against the C header and every family against direct computations.
add_test(NAME fortran.module_covers_exports
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fortran/check_module_exports.sh ${PROJECT_SOURCE_DIR}/fortran/sfft.f90)
set_tests_properties(fortran.module_covers_exports PROPERTIES ENVIRONMENT "EXPECTED=${SFFT_EXPORTS_SPACED}")
if(SFFT_HAVE_FORTRAN)
  add_executable(fortran_api_test fortran/api_test.f90 fortran/c_facts.c)
  target_link_libraries(fortran_api_test PRIVATE sfft::sfft_fortran)
  if(CMAKE_Fortran_COMPILER_ID STREQUAL "GNU")
    target_compile_options(fortran_api_test PRIVATE $<$<COMPILE_LANGUAGE:Fortran>:-std=f2018 -Wall>)
  endif()
  set_target_properties(fortran_api_test PROPERTIES LINKER_LANGUAGE Fortran)
  add_test(NAME fortran.api COMMAND fortran_api_test WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
else()
  add_test(NAME fortran.api COMMAND bash -c "echo 'skipped: the Fortran module is not built (no Fortran compiler, SFFT_ENABLE_FORTRAN=OFF or fewer families)'; exit 77")
  set_tests_properties(fortran.api PROPERTIES SKIP_RETURN_CODE 77)
endif()

# examples/, built and run the way a user does: copied out of the tree, against the installed prefix
# (tests/consumers/run_examples.sh; 77 = skipped, e.g. no NumPy, no CuPy, no Fortran compiler). They use every
# family, so a build of fewer families has none of them.
if(SFFT_EVERY_FAMILY)
  foreach(kind c cpp_cmake fortran python_numpy python_cupy)
    add_test(NAME consumer.example_${kind} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/consumers/run_examples.sh ${kind})
    set_tests_properties(consumer.example_${kind} PROPERTIES SKIP_RETURN_CODE 77 RESOURCE_LOCK consumer_install
      ENVIRONMENT "SFFT_SOURCE=${PROJECT_SOURCE_DIR};SFFT_BUILD=${PROJECT_BINARY_DIR};SFFT_INSTALL=${PROJECT_BINARY_DIR}/consumer-install;SFFT_HAVE_FORTRAN=${SFFT_HAVE_FORTRAN}")
  endforeach()
endif()
