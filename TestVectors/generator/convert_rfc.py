#!/usr/bin/env python3
"""Convert the hand-transcribed RFC test vectors (rfc_sources/*.json, copied from
/work/shared/vectors/rfc) into Wycheproof-shaped files under TestVectors/rfc/, so the
library's Wycheproof reader (SPEC.md §8) runs them unchanged:

    x25519_rfc7748.json       XDH / XdhComp        RFC 7748 §5.2 and §6.1
    ed25519_rfc8032.json      EDDSA / EddsaVerify  RFC 8032 §7.1
    hkdf_rfc5869.json         HKDF-SHA-256         RFC 5869 Appendix A.1-A.3
    hmac_sha256_rfc4231.json  HMACSHA256 / MacTest RFC 4231 §4.2-4.8

Every value is recomputed with python `cryptography` before a file is written.
Optionally (--wycheproof-src DIR) copies the Wycheproof files unchanged into
TestVectors/wycheproof/ and checks that the copies are byte-identical.

Usage: python3 convert_rfc.py [--src DIR] [--out DIR] [--wycheproof-src DIR]
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True

from cryptography.hazmat.primitives import hashes, hmac, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ed25519, x25519  # noqa: E402
from cryptography.hazmat.primitives.kdf.hkdf import HKDF  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SRC = os.path.join(HERE, "rfc_sources")
DEFAULT_OUT = os.path.normpath(os.path.join(HERE, "..", "rfc"))
DEFAULT_WYCHEPROOF_OUT = os.path.normpath(os.path.join(HERE, "..", "wycheproof"))
WYCHEPROOF_FILES = ["x25519_test.json", "ed25519_test.json", "aes_gcm_test.json",
                    "hkdf_sha256_test.json", "hmac_sha256_test.json", "xchacha20_poly1305_test.json",
                    "mlkem_768_test.json", "mlkem_768_encaps_test.json", "LICENSE-wycheproof", "SOURCES.md"]

h = bytes.fromhex


def x25519_shared(k: bytes, u: bytes) -> bytes:
    return x25519.X25519PrivateKey.from_private_bytes(k).exchange(x25519.X25519PublicKey.from_public_bytes(u))


def write(path: str, algorithm: str, schema: str, source: str, header: list, groups: list) -> int:
    n = sum(len(g["tests"]) for g in groups)
    ids = [t["tcId"] for g in groups for t in g["tests"]]
    assert ids == list(range(1, n + 1)), ids
    for g in groups:
        for t in g["tests"]:
            assert t["result"] in ("valid", "invalid", "acceptable") and isinstance(t["flags"], list)
    doc = {"algorithm": algorithm, "schema": schema, "numberOfTests": n, "source": source,
           "header": header, "notes": {}, "testGroups": groups}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    return n


def test(tc: int, comment: str, **fields) -> dict:
    d = {"tcId": tc, "comment": comment, "flags": []}
    d.update(fields)
    d["result"] = "valid"
    return d


# ---------------------------------------------------------------------------- X25519
def convert_x25519(src: dict, out: str) -> int:
    tests = []
    for v in src["scalar_multiplication"]:
        shared = x25519_shared(h(v["scalar"]), h(v["u_coordinate"]))
        assert shared.hex() == v["output"], v["name"]
        # the RFC's decimal decodings agree with the hex
        k = bytearray(h(v["scalar"]))
        k[0] &= 248
        k[31] = (k[31] & 127) | 64
        assert int.from_bytes(k, "little") == int(v["scalar_decimal"])
        assert int.from_bytes(h(v["u_coordinate"]), "little") % 2**255 == int(v["u_coordinate_decimal"])
        extra = " (u-coordinate has bit 255 set; X25519 masks it)" if h(v["u_coordinate"])[31] & 0x80 else ""
        tests.append(test(len(tests) + 1, v["name"] + extra,
                          public=v["u_coordinate"], private=v["scalar"], shared=v["output"]))
    it = src["iterated"]
    nine = it["initial_k_and_u"]
    assert x25519_shared(h(nine), h(nine)).hex() == it["after_1_iteration"]
    tests.append(test(len(tests) + 1, "RFC 7748 5.2 iterated X25519 after 1 iteration (k = u = 9)",
                      public=nine, private=nine, shared=it["after_1_iteration"]))
    # the 1,000-iteration value is checked here but cannot be one XdhComp test
    k, u = h(nine), h(nine)
    for _ in range(1000):
        k, u = x25519_shared(k, u), k
    assert k.hex() == it["after_1000_iterations"]
    dhv = src["diffie_hellman"]
    a_sk, a_pk, b_sk, b_pk, ss = (dhv[x] for x in ("alice_private", "alice_public", "bob_private", "bob_public",
                                                     "shared_secret"))
    base = "09" + "00" * 31
    assert x25519_shared(h(a_sk), h(base)).hex() == a_pk and x25519_shared(h(b_sk), h(base)).hex() == b_pk
    assert x25519_shared(h(a_sk), h(b_pk)).hex() == ss and x25519_shared(h(b_sk), h(a_pk)).hex() == ss
    tests.append(test(len(tests) + 1, "RFC 7748 6.1 Alice's public key = X25519(a, 9)",
                      public=base, private=a_sk, shared=a_pk))
    tests.append(test(len(tests) + 1, "RFC 7748 6.1 Bob's public key = X25519(b, 9)",
                      public=base, private=b_sk, shared=b_pk))
    tests.append(test(len(tests) + 1, "RFC 7748 6.1 shared secret, Alice's side: X25519(a, Bob's public key)",
                      public=b_pk, private=a_sk, shared=ss))
    tests.append(test(len(tests) + 1, "RFC 7748 6.1 shared secret, Bob's side: X25519(b, Alice's public key)",
                      public=a_pk, private=b_sk, shared=ss))
    groups = [{"type": "XdhComp", "curve": "curve25519", "tests": tests}]
    return write(out, "XDH", "xdh_comp_schema_v1.json",
                 "RFC 7748 (Elliptic Curves for Security), sections 5.2 and 6.1; the 1,000- and 1,000,000-iteration "
                 "results of 5.2 are not single X25519 calls and are left out",
                 ["RFC 7748 X25519 test vectors in Wycheproof XdhComp form,",
                  "converted by TestVectors/generator/convert_rfc.py."], groups)


# ---------------------------------------------------------------------------- Ed25519
def convert_ed25519(src: dict, out: str) -> int:
    groups = []
    tc = 0
    for v in src["tests"]:
        sk = ed25519.Ed25519PrivateKey.from_private_bytes(h(v["secret_key"]))
        pub = sk.public_key()
        pk = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        assert pk.hex() == v["public_key"], v["name"]
        msg = h(v["message"])
        assert len(msg) == v["message_length"]
        assert sk.sign(msg).hex() == v["signature"], v["name"]  # Ed25519 is deterministic
        pub.verify(h(v["signature"]), msg)  # raises on failure
        der = pub.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        pem = pub.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        tc += 1
        groups.append({
            "type": "EddsaVerify",
            "publicKey": {"type": "EDDSAPublicKey", "curve": "edwards25519", "keySize": 255, "pk": pk.hex()},
            "publicKeyDer": der.hex(),
            "publicKeyPem": pem.decode(),
            "publicKeyJwk": {"kty": "OKP", "crv": "Ed25519", "kid": "none",
                             "x": base64.urlsafe_b64encode(pk).rstrip(b"=").decode()},
            "tests": [test(tc, v["name"], msg=v["message"], sig=v["signature"])],
        })
    return write(out, "EDDSA", "eddsa_verify_schema_v1.json",
                 "RFC 8032 (EdDSA), section 7.1 test vectors for Ed25519 (TEST 1, 2, 3, 1024, SHA(abc))",
                 ["RFC 8032 Ed25519 test vectors in Wycheproof EddsaVerify form (one group per key),",
                  "converted by TestVectors/generator/convert_rfc.py."], groups)


# ---------------------------------------------------------------------------- HKDF
def convert_hkdf(src: dict, out: str) -> int:
    groups: dict[int, list] = {}
    order = []
    for v in src["tests"]:
        assert v["hash"] == "SHA-256"
        ikm, salt, info = h(v["ikm"]), h(v["salt"]), h(v["info"])
        okm = HKDF(algorithm=hashes.SHA256(), length=v["L"], salt=salt or None, info=info).derive(ikm)
        assert okm.hex() == v["okm"], v["name"]
        # PRK = HMAC(salt or zeros, ikm)
        m = hmac.HMAC(salt or bytes(32), hashes.SHA256())
        m.update(ikm)
        assert m.finalize().hex() == v["prk"], v["name"]
        ks = len(ikm) * 8
        if ks not in groups:
            groups[ks] = []
            order.append(ks)
        groups[ks].append(v)
    tc = 0
    out_groups = []
    for ks in order:
        tests = []
        for v in groups[ks]:
            tc += 1
            tests.append(test(tc, f"{v['name']}: {v['description']}", ikm=v["ikm"], salt=v["salt"],
                              info=v["info"], size=v["L"], okm=v["okm"]))
        out_groups.append({"type": "HkdfTest", "keySize": ks, "tests": tests})
    return write(out, "HKDF-SHA-256", "hkdf_test_schema_v1.json",
                 "RFC 5869 (HKDF), Appendix A.1-A.3 (the SHA-256 cases)",
                 ["RFC 5869 HKDF-SHA-256 test vectors in Wycheproof HkdfTest form (keySize = IKM size in bits),",
                  "converted by TestVectors/generator/convert_rfc.py."], out_groups)


# ---------------------------------------------------------------------------- HMAC-SHA-256
def convert_hmac(src: dict, out: str) -> int:
    groups: dict[tuple, list] = {}
    order = []
    for v in src["tests"]:
        key, data, tag = h(v["key"]), h(v["data"]), h(v["hmac_sha256"])
        m = hmac.HMAC(key, hashes.SHA256())
        m.update(data)
        full = m.finalize()
        tag_bits = v.get("truncated_to_bits", 256)
        assert len(tag) * 8 == tag_bits and full[:len(tag)] == tag, v["name"]
        g = (len(key) * 8, tag_bits)
        if g not in groups:
            groups[g] = []
            order.append(g)
        groups[g].append(v)
    tc = 0
    out_groups = []
    for ks, ts in order:
        tests = []
        for v in groups[(ks, ts)]:
            tc += 1
            note = " (tag truncated to 128 bits)" if ts != 256 else ""
            tests.append(test(tc, v["name"] + note, key=v["key"], msg=v["data"], tag=v["hmac_sha256"]))
        out_groups.append({"type": "MacTest", "keySize": ks, "tagSize": ts, "tests": tests})
    return write(out, "HMACSHA256", "mac_test_schema_v1.json",
                 "RFC 4231 (HMAC-SHA-224/256/384/512 test vectors), sections 4.2-4.8, HMAC-SHA-256 only",
                 ["RFC 4231 HMAC-SHA-256 test vectors in Wycheproof MacTest form (grouped by key and tag size),",
                  "converted by TestVectors/generator/convert_rfc.py."], out_groups)


# ---------------------------------------------------------------------------- Wycheproof copy
def copy_wycheproof(src_dir: str, out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    for name in WYCHEPROOF_FILES:
        src, dst = os.path.join(src_dir, name), os.path.join(out_dir, name)
        shutil.copyfile(src, dst)
        with open(src, "rb") as a, open(dst, "rb") as b:
            assert a.read() == b.read(), name
        if name.endswith(".json"):
            with open(dst) as f:
                d = json.load(f)
            n = sum(len(g["tests"]) for g in d["testGroups"])
            assert n == d["numberOfTests"], name


def convert(src_dir: str = DEFAULT_SRC, out_dir: str = DEFAULT_OUT) -> dict:
    os.makedirs(out_dir, exist_ok=True)

    def load(name):
        # The copies kept in rfc_sources/ end in .json.in so that the conformance runner,
        # which reads every *.json under TestVectors/, does not take them for vector files.
        path = os.path.join(src_dir, name)
        if not os.path.exists(path):
            path += ".in"
        with open(path) as f:
            return json.load(f)

    counts = {}
    for name, fn in (("x25519_rfc7748.json", convert_x25519), ("ed25519_rfc8032.json", convert_ed25519),
                     ("hkdf_rfc5869.json", convert_hkdf), ("hmac_sha256_rfc4231.json", convert_hmac)):
        counts[name] = fn(load(name), os.path.join(out_dir, name))
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default=DEFAULT_SRC, help="folder with the RFC transcriptions")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--wycheproof-src", default=None,
                    help="also copy the Wycheproof files from this folder into TestVectors/wycheproof/")
    ap.add_argument("--wycheproof-out", default=DEFAULT_WYCHEPROOF_OUT)
    args = ap.parse_args(argv)
    for name, n in convert(args.src, args.out).items():
        print(f"rfc/{name:28} {n:4} tests")
    if args.wycheproof_src:
        copy_wycheproof(args.wycheproof_src, args.wycheproof_out)
        print(f"copied {len(WYCHEPROOF_FILES)} Wycheproof files to {args.wycheproof_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
