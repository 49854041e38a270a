#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The dynamic symbols libsfft defines must be exactly $EXPECTED (the public API), nothing more or less.
set -euo pipefail
lib=$1
actual=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sed 's/@.*//' | grep -v '^SFFT_0$' | sort -u)
expected=$(tr ' ' '\n' <<<"$EXPECTED" | sed '/^$/d' | sort -u)
if [[ "$actual" != "$expected" ]]; then
  echo "exported symbols differ from the public API:"
  diff <(echo "$expected") <(echo "$actual") || true
  exit 1
fi
echo "exports OK: $(wc -l <<<"$actual") symbols"
