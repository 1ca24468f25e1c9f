#!/usr/bin/env bash
# The ctgrind harness must see a deliberate leak: valgrind must exit with the error code we gave it
# (99), not 0 and not a crash. With a third argument, the binary's own report must also say that every
# one of its probes (tests/ct/ct_test.h: one per checked path) was seen.
#   expect_leak.sh VALGRIND BINARY [--all-probes]
out=$("$1" --quiet --error-exitcode=99 "$2" --self-check 2>/dev/null)
rc=$?
if [ "$rc" -ne 99 ]; then
  echo "ct self-check: valgrind exited $rc, expected 99 (a secret-dependent branch went unseen)" >&2
  exit 1
fi
if [ "${3:-}" = --all-probes ] && ! grep -q "ct self-check: all [0-9]* probes reported" <<< "$out"; then
  echo "ct self-check: some probe went unreported: a checked path lost the secrecy of its inputs" >&2
  "$1" --quiet "$2" --self-check 2>&1 | grep "NOT reported" >&2
  exit 1
fi
echo "ct self-check: the deliberate secret-dependent branch was reported ${3:+(every probe)}"
