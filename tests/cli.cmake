# SPDX-License-Identifier: Apache-2.0
# The `sfft` CLI on user data (.npy/.npz in; .npy/.csv/.json/.png out; refusals of bad arguments), checked
# by a pure-Python script against references it computes itself.
if(TARGET sfft_cli)
  foreach(family shift sparse nufft3 spfft2d)
    if(NOT family IN_LIST SFFT_MODULES)
      return()
    endif()
  endforeach()
  # `python3` from PATH, not this machine's interpreter path, so a build carried to another machine runs it.
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME cli.user_files COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli/cli_files.py $<TARGET_FILE:sfft_cli>)
  endif()
endif()
