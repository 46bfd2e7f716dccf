# The check helpers of the shell tests (sourced, not run): a failed check is reported and
# counted, and the script goes on so that one run lists every failure; `finish` then exits 1 if
# any check failed, else prints that all of NAME's checks passed.
#   fail MESSAGE...              report one failed check
#   expect_has TEXT WANT LABEL   fail unless TEXT contains WANT ("LABEL lacks 'WANT'", and TEXT)
#   finish NAME                  the verdict
#   isolate PREFIX [SIGNAL]      a scratch directory $TMP (removed on exit) holding HOME, and the
#                                user's BT_* settings unset; a bt-axon whose pid the script puts
#                                in AXON_PID is stopped on exit with SIGNAL (default TERM)
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
isolate() {
  TMP="$(mktemp -d "${TMPDIR:-/tmp}/$1-XXXXXX")"
  AXON_PID=""
  AXON_STOP_SIGNAL="${2:-TERM}"
  trap isolate_cleanup EXIT
  unset BT_WALLET_PATH BT_WALLET_NAME BT_WALLET_HOTKEY BT_WALLET_PASSWORD BT_AXON_IP BT_AXON_PORT \
    BT_ADMIN_LISTEN
  export HOME="$TMP/home"
}
isolate_cleanup() {
  if [[ -n "$AXON_PID" ]]; then
    kill -s "$AXON_STOP_SIGNAL" "$AXON_PID" 2>/dev/null || true
    wait "$AXON_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
