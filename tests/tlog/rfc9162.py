#!/usr/bin/env python3
"""An independent checker of RFC 9162 section 2.1 Merkle trees, written from the RFC text (not from
dsig's C code), for the tests of the dsig transparency log.

  rfc9162.py selftest                      known roots of the RFC 6962 reference test tree
  rfc9162.py vectors SEED < C_OUTPUT        recompute every line `dsig` printed (tlog_vectors) and compare
  rfc9162.py log LOG                        the tree size and root hash (hex) of a log file of JSON lines
  rfc9162.py inclusion LOG PROOF_JSON       check a /v1/log/proof answer against the log and its checkpoint
  rfc9162.py consistency LOG CONS_JSON      check a /v1/log/consistency answer against the log

Exit status 0 when everything matched, 1 otherwise (with a message)."""
import base64
import hashlib
import json
import random
import sys


def H(b):
    return hashlib.sha256(b).digest()


def leaf_hash(entry):  # section 2.1.1: MTH({d(0)}) = HASH(0x00 || d(0))
    return H(b"\x00" + entry)


def k_of(n):  # the largest power of two smaller than n
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(leaves):  # leaves: list of leaf hashes (already 0x00-prefixed and hashed)
    n = len(leaves)
    if n == 0:
        return H(b"")
    if n == 1:
        return leaves[0]
    k = k_of(n)
    return H(b"\x01" + mth(leaves[:k]) + mth(leaves[k:]))


def path(m, leaves):  # section 2.1.3.1 PATH(m, D[n])
    n = len(leaves)
    if n == 1:
        return []
    k = k_of(n)
    if m < k:
        return path(m, leaves[:k]) + [mth(leaves[k:])]
    return path(m - k, leaves[k:]) + [mth(leaves[:k])]


def subproof(m, leaves, b):  # section 2.1.4.1 SUBPROOF(m, D[n], b)
    n = len(leaves)
    if m == n:
        return [] if b else [mth(leaves)]
    k = k_of(n)
    if m <= k:
        return subproof(m, leaves[:k], b) + [mth(leaves[k:])]
    return subproof(m - k, leaves[k:], False) + [mth(leaves[:k])]


def proof(m, leaves):
    return subproof(m, leaves, True)


def verify_inclusion(index, size, leaf, proof_, root):  # section 2.1.3.2
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof_:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = H(b"\x01" + p + r)
            while not (fn & 1) and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = H(b"\x01" + r + p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(first, second, first_hash, second_hash, path_):  # section 2.1.4.2
    if first == second:
        return not path_ and first_hash == second_hash
    if not path_:
        return False
    path_ = list(path_)
    if first & (first - 1) == 0:
        path_ = [first_hash] + path_
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path_[0]
    for c in path_[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = H(b"\x01" + c + fr)
            sr = H(b"\x01" + c + sr)
            while not (fn & 1) and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = H(b"\x01" + sr + c)
        fn >>= 1
        sn >>= 1
    return fr == first_hash and sr == second_hash and sn == 0


def fail(msg):
    print("rfc9162.py: " + msg, file=sys.stderr)
    sys.exit(1)


def entry(i):  # the entries tlog_vectors hashes: "entry-<i>"
    return b"entry-%d" % i


def selftest():
    # The RFC 6962 reference test tree (the Certificate Transparency test data): 8 inputs and the roots
    # of their first 1..8 leaves.
    inputs = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
              "606162636465666768696a6b6c6d6e6f"]
    roots = ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
             "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
             "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
             "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
             "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
             "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
             "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
             "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"]
    leaves = [leaf_hash(bytes.fromhex(x)) for x in inputs]
    for n in range(1, 9):
        if mth(leaves[:n]).hex() != roots[n - 1]:
            fail("selftest: root of %d leaves" % n)
    if H(b"").hex() != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855":
        fail("selftest: empty root")
    for n in range(1, 40):
        ls = [leaf_hash(entry(i)) for i in range(n)]
        root = mth(ls)
        for m in range(n):
            if not verify_inclusion(m, n, ls[m], path(m, ls), root):
                fail("selftest: own inclusion proof %d/%d" % (m, n))
        for m in range(1, n + 1):
            if not verify_consistency(m, n, mth(ls[:m]), root, proof(m, ls)):
                fail("selftest: own consistency proof %d/%d" % (m, n))
    print("rfc9162.py selftest: ok")


def hexlist(s):
    return [bytes.fromhex(x) for x in s.split(",")] if s and s != "-" else []


def vectors():
    """Lines from tlog_vectors: `root N HEX`, `incl M N HEX,HEX,...`, `cons M N HEX,...` ("-" = empty)."""
    cache = {}

    def leaves(n):
        while len(cache) < n:
            cache[len(cache)] = leaf_hash(entry(len(cache)))
        return [cache[i] for i in range(n)]

    count = 0
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        if f[0] == "root":
            n = int(f[1])
            want = mth(leaves(n)).hex()
            if f[2] != want:
                fail("root of %d: dsig %s, RFC %s" % (n, f[2], want))
        elif f[0] == "incl":
            m, n = int(f[1]), int(f[2])
            ls = leaves(n)
            want = [x.hex() for x in path(m, ls)]
            got = f[3].split(",") if f[3] != "-" else []
            if got != want:
                fail("inclusion proof of %d in %d differs" % (m, n))
            if not verify_inclusion(m, n, ls[m], hexlist(f[3]), mth(ls)):
                fail("inclusion proof of %d in %d does not verify" % (m, n))
        elif f[0] == "cons":
            m, n = int(f[1]), int(f[2])
            ls = leaves(n)
            want = [x.hex() for x in proof(m, ls)]
            got = f[3].split(",") if f[3] != "-" else []
            if got != want:
                fail("consistency proof %d -> %d differs" % (m, n))
            if not verify_consistency(m, n, mth(ls[:m]), mth(ls), hexlist(f[3])):
                fail("consistency proof %d -> %d does not verify" % (m, n))
        else:
            fail("unknown line: " + line.strip())
        count += 1
    if count == 0:
        fail("no vectors read")
    print("rfc9162.py vectors: %d lines match" % count)


def log_leaves(path_):
    with open(path_, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [leaf_hash(x) for x in lines], lines


def b64(s):
    return base64.b64decode(s, validate=True)


def checkpoint_fields(note):
    text = note.split("\n\n")[0].split("\n")
    return text[0], int(text[1]), b64(text[2])


def inclusion(log, answer):
    ls, lines = log_leaves(log)
    a = json.load(open(answer))
    origin, size, root = checkpoint_fields(a["checkpoint"])
    idx = a["index"]
    if a["tree_size"] != size or size > len(ls):
        fail("tree size %d (checkpoint %d, log %d)" % (a["tree_size"], size, len(ls)))
    if mth(ls[:size]) != root:
        fail("the checkpoint's root is not the root of the log's first %d records" % size)
    leaf = bytes.fromhex(a["leaf_hash"])
    if leaf != ls[idx]:
        fail("leaf_hash is not the hash of line %d of the log" % (idx + 1))
    hashes = [bytes.fromhex(x) for x in a["hashes"]]
    if hashes != path(idx, ls[:size]):
        fail("the proof differs from PATH(%d, D[%d])" % (idx, size))
    if not verify_inclusion(idx, size, leaf, hashes, root):
        fail("the inclusion proof does not verify")
    print("rfc9162.py inclusion: record %d in %d (%s): ok" % (idx, size, origin))


def consistency(log, answer):
    ls, _ = log_leaves(log)
    a = json.load(open(answer))
    m, n = a["from"], a["to"]
    hashes = [bytes.fromhex(x) for x in a["hashes"]]
    if hashes != proof(m, ls[:n]):
        fail("the proof differs from PROOF(%d, D[%d])" % (m, n))
    if bytes.fromhex(a["from_root"]) != mth(ls[:m]) or bytes.fromhex(a["to_root"]) != mth(ls[:n]):
        fail("roots differ from the log's")
    if not verify_consistency(m, n, mth(ls[:m]), mth(ls[:n]), hashes):
        fail("the consistency proof does not verify")
    print("rfc9162.py consistency: %d -> %d: ok" % (m, n))


def main():
    if len(sys.argv) < 2:
        fail("usage: rfc9162.py selftest|vectors|log|inclusion|consistency ...")
    cmd = sys.argv[1]
    if cmd == "selftest":
        selftest()
    elif cmd == "vectors":
        random.seed(sys.argv[2] if len(sys.argv) > 2 else 1)
        vectors()
    elif cmd == "log":
        ls, _ = log_leaves(sys.argv[2])
        print(len(ls), mth(ls).hex())
    elif cmd == "inclusion":
        inclusion(sys.argv[2], sys.argv[3])
    elif cmd == "consistency":
        consistency(sys.argv[2], sys.argv[3])
    else:
        fail("unknown command " + cmd)


if __name__ == "__main__":
    main()
