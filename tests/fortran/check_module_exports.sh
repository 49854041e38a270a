#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every exported C symbol ($EXPECTED) has a binding in the Fortran module $1: an interface bound to it by name,
# or (the unsized option inits, C macros) a module procedure of that name.
set -euo pipefail
module=$1
missing=()
for symbol in $EXPECTED; do
  grep -qiE "bind\(c, name=\"$symbol\"\)|^ *subroutine $symbol\(" "$module" || missing+=("$symbol")
done
if (( ${#missing[@]} )); then
  echo "exported symbols without a Fortran binding in $module: ${missing[*]}"
  exit 1
fi
echo "Fortran module binds all $(wc -w <<<"$EXPECTED") exported symbols"
