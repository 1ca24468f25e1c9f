#!/usr/bin/env bash
# The ctgrind harness must see a deliberate leak: valgrind must exit with the error code we gave it
# (99), not 0 and not a crash. Usage: expect_leak.sh VALGRIND BINARY
"$1" --quiet --error-exitcode=99 "$2" --self-check 2>/dev/null
rc=$?
if [ "$rc" -ne 99 ]; then
  echo "ct self-check: valgrind exited $rc, expected 99 (a secret-dependent branch went unseen)" >&2
  exit 1
fi
echo "ct self-check: the deliberate secret-dependent branch was reported"
