#!/usr/bin/env bash
# check-error-domains.sh — every error domain of the libraries is named as its quark
# function says: G_DEFINE_QUARK(rs-NAME-error-quark, rs_NAME_error). G_DEFINE_QUARK turns
# its first argument into the domain's string, which a GError and g_quark_to_string() show;
# clang-format once spaced five of them into "rs - layout - error - quark". Checks every
# G_DEFINE_QUARK of the tree, so a new domain is covered without a new test row.
# Usage: check-error-domains.sh SOURCE_ROOT. Prints each wrong one and "N passed, M failed".
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
files=$(git ls-files '*.c' 2>/dev/null || find . -name '*.c' -not -path './build*')
passed=0
failed=0
while IFS= read -r hit; do
  file=${hit%%:*}
  rest=${hit#*:}
  line=${rest%%:*}
  args=$(sed -E 's/.*G_DEFINE_QUARK\((.*)\).*/\1/' <<<"${rest#*:}")
  name=$(sed -E 's/[[:space:]]*,.*//' <<<"$args")
  func=$(sed -E 's/.*,[[:space:]]*//; s/[[:space:]]*$//' <<<"$args")
  want="${func//_/-}-quark"
  if [ "$name" = "$want" ] && [[ "$name" =~ ^rs-[a-z0-9-]+-error-quark$ ]]; then
    passed=$((passed + 1))
  else
    echo "$file:$line: error domain \"$name\" should be \"$want\" (rs-NAME-error-quark)"
    failed=$((failed + 1))
  fi
done < <(grep -n 'G_DEFINE_QUARK(' $files | grep -v '^tests/check-error-domains.sh')
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
