#!/usr/bin/env bash
# Quoted files cannot drift: in README.md and docs/*.md, a code block right after a line
#   <!-- snippet: <path in the repository> -->
# must be that file's whole text, byte for byte. Usage: snippets_test.sh <source dir>.
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
    state == 0 && match($0, /^<!-- snippet: [^ ]+ -->$/) {
      path = substr($0, 15, length($0) - 18); line = NR; state = 1; next }
    state == 1 && /^```/ { n++; out = dir "/" n; printf "" > out;
                           print n, path, line >> (dir "/list"); state = 2; next }
    state == 1 && !/^$/ { print "0", path, line >> (dir "/list"); state = 0; next }
    state == 2 && /^```$/ { close(out); state = 0; next }
    state == 2 { print >> out }' "$md"
  [[ -f "$TMP/list" ]] || continue
  while read -r n path line; do
    checked=$((checked + 1))
    if [[ "$n" == 0 ]]; then
      echo "FAIL: $md:$line: the snippet marker for $path is not followed by a code block" >&2
      failures=$((failures + 1))
    elif [[ ! -f "$path" ]]; then
      echo "FAIL: $md:$line: $path does not exist" >&2
      failures=$((failures + 1))
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
