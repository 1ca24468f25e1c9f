#!/usr/bin/env bash
# tests/tlog/tlog_rfc9162.sh — dsig's Merkle trees and proofs (tlog_vectors) against the independent
# RFC 9162 checker: every root, inclusion and consistency proof of the trees of 1..70 leaves, and
# random proofs in trees of up to 5000.
set -euo pipefail
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
python3 "$TLOG_CHECKER" selftest
for seed in 1 2; do
    "$TLOG_VECTORS" $seed | python3 "$TLOG_CHECKER" vectors $seed
done
