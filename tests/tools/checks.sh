# The check helpers of the shell tests (sourced, not run): a failed check is reported and
# counted, and the script goes on so that one run lists every failure; `finish` then exits 1 if
# any check failed, else prints that all of NAME's checks passed.
#   fail MESSAGE...              report one failed check
#   expect_has TEXT WANT LABEL   fail unless TEXT contains WANT ("LABEL lacks 'WANT'", and TEXT)
#   finish NAME                  the verdict
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect_has() { [[ "$1" == *"$2"* ]] || fail "$3 lacks '$2':"$'\n'"$1"; }
finish() {
  if ((failures)); then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
  echo "$1: all checks passed"
}
