#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source, build and script file of the project names its licence (SPDX identifier in its first lines).
set -euo pipefail
root=$1
cd "$root"
missing=$(git ls-files 2>/dev/null | grep -E '\.(c|h|cpp|hpp|cu|cuh|inl|f90|py|sh|cmake|in)$|(^|/)CMakeLists\.txt$|^run\.sh$|^\.ci/run$' |
          while read -r f; do [[ -f $f ]] && ! head -n 5 "$f" | grep -q 'SPDX-License-Identifier:' && echo "$f"; done || true)
[[ -f LICENSE ]] || { echo "LICENSE is missing"; exit 1; }
if [[ -n $missing ]]; then
  echo "files without an SPDX-License-Identifier line:"
  echo "$missing"
  exit 1
fi
echo "SPDX identifiers OK"
