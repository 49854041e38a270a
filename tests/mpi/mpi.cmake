# SPDX-License-Identifier: Apache-2.0
# libsfft_mpi's tests: one GoogleTest program run under mpiexec on 2 and 3 ranks (more ranks than cores:
# OpenMPI needs --oversubscribe; as root, as in CI containers, OMPI_ALLOW_RUN_AS_ROOT*).
add_executable(mpi_test ${CMAKE_CURRENT_SOURCE_DIR}/mpi/mpi_test.cpp ${CMAKE_CURRENT_SOURCE_DIR}/mpi/dtype_shim.c)
target_link_libraries(mpi_test PRIVATE sfft::sfft_mpi sfft::sfft sfft_test_support GTest::gtest)
set(SFFT_MPIEXEC_FLAGS ${MPIEXEC_PREFLAGS})
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE SFFT_MPIEXEC_VERSION ERROR_QUIET)
if(SFFT_MPIEXEC_VERSION MATCHES "Open MPI|OpenRTE")
  list(PREPEND SFFT_MPIEXEC_FLAGS --oversubscribe)
endif()
set(SFFT_MPI_TEST_ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMP_NUM_THREADS=1")
# Sanitizer builds: ASan and UBSan stay on, leak checking off. OpenMPI keeps allocations past MPI_Finalize in
# components it has unloaded by then, so LeakSanitizer reports ~100 KB from "<unknown module>" that no
# suppression can name (checked with OpenMPI 4.1). sfft's engine code is leak-checked by the other tests.
if(SFFT_SANITIZE)
  list(APPEND SFFT_MPI_TEST_ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
endif()
foreach(ranks 2 3)
  add_test(NAME mpi.ranks${ranks}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${SFFT_MPIEXEC_FLAGS}
                   $<TARGET_FILE:mpi_test> ${MPIEXEC_POSTFLAGS})
  set_tests_properties(mpi.ranks${ranks} PROPERTIES TIMEOUT 300 PROCESSORS ${ranks}
                       ENVIRONMENT "${SFFT_MPI_TEST_ENVIRONMENT}")
endforeach()
# The installed library from a C99 MPI program: pkg-config with mpicc, and CMake's find_package(sfft COMPONENTS MPI).
foreach(kind pkgconfig cmake)
  add_test(NAME consumer.mpi_${kind} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/consumer.sh ${kind})
  set_tests_properties(consumer.mpi_${kind} PROPERTIES SKIP_RETURN_CODE 77 RESOURCE_LOCK consumer_install TIMEOUT 300
    ENVIRONMENT "SFFT_SOURCE=${PROJECT_SOURCE_DIR};SFFT_BUILD=${PROJECT_BINARY_DIR};SFFT_INSTALL=${PROJECT_BINARY_DIR}/consumer-install;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endforeach()
