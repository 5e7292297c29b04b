#!/usr/bin/env bash
# Table declarations: the C unit test of the table layer, docs/tables.md is
# exactly `hta tables`, and every command's --help lists its tables within
# 100 columns.
set -eu
cd "$(dirname "$0")/../.."
HTA=${HTA:-build/hta}
"${BUILD:-build}/test_table"

if ! "$HTA" tables | diff -u docs/tables.md - >/dev/null; then
  echo "FAIL docs/tables.md differs from 'hta tables' (regenerate: $HTA tables > docs/tables.md)"
  "$HTA" tables | diff -u docs/tables.md - | head -20
  exit 1
fi
echo "ok   docs/tables.md = hta tables"

fail=0
for c in $("$HTA" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}'); do
  help=$("$HTA" "$c" --help)
  long=$(printf '%s\n' "$help" | awk 'length > 100' | head -3)
  if [ -n "$long" ]; then echo "FAIL hta $c --help: lines over 100 columns:"; echo "$long"; fail=1; fi
  # the tables docs/tables.md gives this command, each listed by its --help
  for t in $("$HTA" tables | awk -v c="## \`hta $c\`" '/^## / {on = ($0 == c)} on && /^### / {gsub(/[#` ]/, ""); print}'); do
    printf '%s\n' "$help" | grep -q "^  $t: " || { echo "FAIL hta $c --help does not list table $t"; fail=1; }
  done
done
[ $fail = 0 ] && echo "ok   every --help lists its tables within 100 columns"
exit $fail
