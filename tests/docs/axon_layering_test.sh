#!/usr/bin/env bash
# The axon's source folders include only downward: for each `#include "<folder>/..."` in
# axon/src/<a>/, <folder> must be <a> or a folder listed before <a> in axon/CMakeLists.txt's layer
# comment (its `#   src/<folder>/` lines, bottom layer first; docs/architecture.md). Files directly
# in axon/src/ are the top: they may include any folder, and no folder may include them. Also fails when a folder of axon/src is
# missing from that list, or the list is empty (the check would pass vacuously).
# Usage: axon_layering_test.sh <source dir>.
set -euo pipefail
cd "$1/axon"
mapfile -t layers < <(sed -n 's|^#   src/\([a-z_]*\)/ .*|\1|p' CMakeLists.txt)
((${#layers[@]} > 0)) || { echo "no layer list in axon/CMakeLists.txt"; exit 1; }
declare -A rank
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done
failures=0
for dir in src/*/; do
  a=$(basename "$dir")
  [[ -n "${rank[$a]+x}" ]] || { echo "axon/src/$a is not in axon/CMakeLists.txt's layer list"; failures=1; continue; }
  while IFS=: read -r file inc; do
    if [[ "$inc" != */* && -f "src/$inc" ]]; then
      echo "upward include: axon/$file includes the top's \"$inc\""
      failures=1
      continue
    fi
    x=${inc%%/*}
    [[ -n "${rank[$x]+x}" && "$x" != "$a" ]] || continue
    if ((rank[$x] > rank[$a])); then
      echo "upward include: axon/$file includes \"$inc\" ($a -> $x; $x is a later layer)"
      failures=1
    fi
  done < <(grep -o '^#include "[^"]*"' "$dir"* /dev/null | sed 's|:#include "|:|; s|"$||')
done
((failures == 0)) && echo "axon/src includes run downward (${layers[*]})"
exit "$failures"
