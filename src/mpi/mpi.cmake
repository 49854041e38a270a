# SPDX-License-Identifier: Apache-2.0
# libsfft_mpi (sfft/sfft_mpi.h): the distributed sparse FFT and fftshift, built when MPI is found. It links
# libsfft (the local fftshift_nd, sfft_last_error) and MPI; libsfft itself never sees MPI. The sparse FFT's
# engines (design, folds, decoding; the CUDA engine through the plugin found beside libsfft) come from the
# archive of libsfft's internal objects, hidden inside this library, because the distributed plan drives the
# engine's block fold, which libsfft's C API does not expose.
set(SFFT_MPI_SOURCES capi/last_error.cpp src/mpi/api.cpp src/mpi/collective.cpp src/mpi/shift.cpp src/mpi/sparse_plan.cpp)
set(SFFT_MPI_EXPORTS sfft_mpi_local_size sfft_mpi_local_size_f sfft_mpi_create sfft_mpi_create_f sfft_mpi_exec
    sfft_mpi_destroy sfft_mpi_fftshift sfft_mpi_fftshift_f sfft_mpi_ifftshift sfft_mpi_ifftshift_f sfft_mpi_last_error)
list(JOIN SFFT_MPI_EXPORTS ";\n    " SFFT_MPI_EXPORT_LINES)
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/sfft_mpi.map
     CONTENT "SFFT_MPI_0 {\n  global:\n    ${SFFT_MPI_EXPORT_LINES};\n  local: *;\n};\n" @ONLY)

add_library(sfft_mpi SHARED ${SFFT_MPI_SOURCES})
add_library(sfft::sfft_mpi ALIAS sfft_mpi)
target_include_directories(sfft_mpi PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/capi)
# C++ code including mpi.h (this library, C++ consumers of sfft_mpi.h) uses the C bindings only: without these,
# OpenMPI's and MPICH's mpi.h pull in the removed MPI C++ bindings, which libmpi no longer defines.
target_compile_definitions(sfft_mpi PUBLIC OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
target_compile_options(sfft_mpi PRIVATE ${SFFT_WARNINGS})
set_target_properties(sfft_mpi PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR} ${SFFT_HIDDEN_VISIBILITY}
  LINK_DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/sfft_mpi.map)
target_link_options(sfft_mpi PRIVATE "LINKER:--version-script=${CMAKE_CURRENT_BINARY_DIR}/sfft_mpi.map")
if(NOT SFFT_SANITIZE)
  target_link_options(sfft_mpi PRIVATE "LINKER:--no-undefined")
endif()
# Public: sfft_mpi.h includes sfft.h and mpi.h.
target_link_libraries(sfft_mpi PUBLIC sfft MPI::MPI_C PRIVATE $<BUILD_INTERFACE:sfft_internal>)

install(TARGETS sfft_mpi EXPORT sfftMpiTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES include/sfft/sfft_mpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sfft)
# Its own export set: find_package(sfft) loads it (and finds MPI) only when asked for COMPONENTS MPI.
install(EXPORT sfftMpiTargets NAMESPACE sfft:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sfft)
configure_file(pkgconfig/sfft_mpi.pc.in ${CMAKE_CURRENT_BINARY_DIR}/sfft_mpi.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sfft_mpi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
