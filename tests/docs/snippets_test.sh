#!/usr/bin/env bash
# Quoted files cannot drift: in README.md and docs/*.md, a code block right after a line
#   <!-- snippet: <path in the repository> -->
# must be that file's whole text, byte for byte; after
#   <!-- snippet: <path> (excerpt) -->
# each non-blank line of the block must be a line of the file, in the file's order (lines may be
# left out, none added or changed). Usage: snippets_test.sh <source dir>.
# Fails too when no marker is found (the check would pass vacuously) or a marker has no block.
set -euo pipefail

SRC="$1"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/bt-snippets-XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
failures=0
checked=0
for md in README.md docs/*.md; do
  # Writes each quoted block to $TMP/<n> and "<n> <path> <line>" to $TMP/list.
  rm -f "$TMP"/list "$TMP"/[0-9]*
  awk -v dir="$TMP" '
    state == 0 && /^<!-- snippet: [^ ]+( \(excerpt\))? -->$/ {
      split($0, w, " "); path = w[3]; mode = (w[4] == "(excerpt)") ? "excerpt" : "whole"
      line = NR; state = 1; next }
    state == 1 && /^```/ { n++; out = dir "/" n; printf "" > out;
                           print n, path, line, mode >> (dir "/list"); state = 2; next }
    state == 1 && !/^$/ { print "0", path, line, mode >> (dir "/list"); state = 0; next }
    state == 2 && /^```$/ { close(out); state = 0; next }
    state == 2 { print >> out }' "$md"
  [[ -f "$TMP/list" ]] || continue
  while read -r n path line mode; do
    checked=$((checked + 1))
    if [[ "$n" == 0 ]]; then
      echo "FAIL: $md:$line: the snippet marker for $path is not followed by a code block" >&2
      failures=$((failures + 1))
    elif [[ ! -f "$path" ]]; then
      echo "FAIL: $md:$line: $path does not exist" >&2
      failures=$((failures + 1))
    elif [[ "$mode" == excerpt ]]; then
      # Each non-blank block line, in order, must match a later line of the file.
      if ! missing="$(awk 'NR == FNR { file[++nf] = $0; next }
                            /^[[:space:]]*$/ { next }
                            { while (++at <= nf && file[at] != $0) {}
                              if (at > nf) { print; exit } }' "$path" "$TMP/$n")" ||
         [[ -n "$missing" ]]; then
        echo "FAIL: $md:$line: this line of the excerpt is not in $path (in order): $missing" >&2
        failures=$((failures + 1))
      fi
    elif ! diff -u "$path" "$TMP/$n" >"$TMP/diff"; then
      echo "FAIL: $md:$line: the block differs from $path (- file, + docs):" >&2
      cat "$TMP/diff" >&2
      failures=$((failures + 1))
    fi
  done <"$TMP/list"
done
((checked > 0)) || { echo "FAIL: no snippet markers found" >&2; exit 1; }
if ((failures)); then
  echo "$failures snippet(s) differ" >&2
  exit 1
fi
echo "$checked quoted file(s) match their sources"
