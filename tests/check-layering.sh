#!/usr/bin/env bash
# check-layering.sh — every `#include "folder/..."` points down the library stack of
# docs/DESIGN.md (or into its own folder). Prints each wrong include as file:line and exits 1;
# prints "1 passed, 0 failed" otherwise. Usage: check-layering.sh SOURCE_ROOT
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
declare -A allowed=(
  [base]=""
  [models]="base"
  [topologies]="base"
  [layout]="base models topologies"
  [plan]="base models topologies layout"
  [sim]="base models topologies layout plan"
  [exec]="base models topologies layout plan"
  [analysis]="base models topologies layout plan sim exec"
  [cli]="base models topologies layout plan sim exec analysis"
)
bad=0
for folder in "${!allowed[@]}"; do
  for file in $(git ls-files "$folder/*.c" "$folder/*.h" "$folder/*.cu" 2>/dev/null ||
                find "$folder" -name '*.[ch]'); do
    while IFS=: read -r line target; do
      top=${target%%/*}
      [ "$top" = "$target" ] && continue          # rs-config.h and other root headers
      [ "$top" = "$folder" ] && continue
      case " ${allowed[$folder]} " in *" $top "*) continue ;; esac
      echo "$file:$line: includes \"$target\": $folder may use only: ${allowed[$folder]:-GLib and libyaml}"
      bad=$((bad + 1))
    done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]*)".*/\1:\2/')
  done
done
if [ "$bad" -gt 0 ]; then
  echo "0 passed, 1 failed ($bad includes point up the stack)"
  exit 1
fi
echo "1 passed, 0 failed"
