#!/usr/bin/env bash
# The docs cannot drift from a tool's --help: every flag (--name) that the tool's section of the
# docs mentions must be one its --help lists, and every flag --help lists must be mentioned in
# that section. Usage:
#   flags_test.sh <binary> <doc.md> <heading> [[@<other.md>] <heading>...] [-- <subcommand>...]
# Each <heading> is the start of a heading line ("## `bt-axon`") in the doc named last (an
# argument @<file> switches to another doc for the headings after it); its section runs to the next
# heading of the same or a higher level. The option lines of the --help of the tool and of each
# subcommand are read.
# A flag that is only an example inside the text (not the tool's) can be listed in the section
# as <!-- flags-not-of-this-tool: --a --b -->.
set -euo pipefail

BIN="$1"; DOC="$2"; shift 2
headings=(); subcommands=()
while (($#)); do
  if [[ "$1" == "--" ]]; then shift; subcommands=("$@"); break; fi
  headings+=("$1"); shift
done
doc="$DOC"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/bt-flags-XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
flags() { grep -oE -- '--[a-z][a-z0-9_.-]*[a-z0-9]' | grep -vxE -- '--help' | sort -u; }

: >"$TMP/section"
for h in "${headings[@]}"; do
  if [[ "$h" == @* ]]; then doc="${h#@}"; continue; fi
  before=$(wc -l <"$TMP/section")
  awk -v h="$h" '
    on && /^#+ / { level = match($0, /[^#]/) - 1; if (level <= start) exit }
    index($0, h) == 1 { on = 1; start = match($0, /[^#]/) - 1 }
    on { print }' "$doc" >>"$TMP/section"
  (($(wc -l <"$TMP/section") > before)) || { echo "FAIL: no section '$h' in $doc" >&2; exit 1; }
done
grep -oE 'flags-not-of-this-tool:[^>]*' "$TMP/section" | flags >"$TMP/ignored" || true
grep -v 'flags-not-of-this-tool:' "$TMP/section" | flags | comm -23 - "$TMP/ignored" >"$TMP/documented"

{
  "$BIN" --help
  for s in "${subcommands[@]}"; do "$BIN" $s --help; done  # "ss58 encode": a nested one
} 2>&1 </dev/null | grep -E '^ +(-[A-Za-z], ?)?--[a-z]' | sed -E 's/^ +(-[A-Za-z], ?)?//; s/[ =].*//' |
  flags >"$TMP/help"  # the option lines only: descriptions mention other flags

rc=0
if undocumented="$(comm -13 "$TMP/documented" "$TMP/help")" && [[ -n "$undocumented" ]]; then
  echo "FAIL: $(basename "$BIN") --help lists flags that $DOC (${headings[*]}) does not mention:" >&2
  echo "$undocumented" >&2; rc=1
fi
if unknown="$(comm -23 "$TMP/documented" "$TMP/help")" && [[ -n "$unknown" ]]; then
  echo "FAIL: $DOC (${headings[*]}) mentions flags that $(basename "$BIN") --help does not list:" >&2
  echo "$unknown" >&2; rc=1
fi
((rc)) || echo "$(basename "$BIN"): $(wc -l <"$TMP/help") flags, docs and --help agree"
exit $rc
