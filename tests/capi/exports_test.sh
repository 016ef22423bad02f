#!/bin/bash
# libptxgen.so exports exactly the functions include/ptxgen/ptxgen.h
# declares: no C++ symbol of ptxgen, Abseil or the C++ runtime.
# Usage: exports_test.sh LIBPTXGEN_SO PTXGEN_H
set -euo pipefail
library=$1
header=$2

exported=$(nm -D --defined-only "$library" | awk '$2 ~ /^[TtWwDdBbRrVviu]$/ {print $3}' | sort)
declared=$(grep -oE '^[a-zA-Z_][a-zA-Z0-9_ *]* \**(ptxgen[A-Za-z0-9]+)\(' "$header" |
  grep -oE 'ptxgen[A-Za-z0-9]+\($' | tr -d '(' | sort)

if [ -z "$declared" ]; then
  echo "found no ptxgen* declarations in $header"
  exit 1
fi
if [ "$exported" != "$declared" ]; then
  echo "libptxgen.so exports what ptxgen.h does not declare (>) or lacks what it does (<):"
  diff <(echo "$declared") <(echo "$exported") || true
  exit 1
fi
echo "libptxgen.so exports the $(echo "$declared" | wc -l) functions of ptxgen.h and nothing else"
