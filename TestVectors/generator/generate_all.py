#!/usr/bin/env python3
"""Regenerate every generated file under TestVectors/ (SPEC.md version 2; deterministic from
--seed; the committed files use seed 1):

    python3 TestVectors/generator/generate_all.py --seed 1

1. convert_rfc:       rfc_sources/*.json.in -> TestVectors/rfc/*.json (Wycheproof shape)
2. self-checks:       XChaCha20-Poly1305 (HChaCha20 KAT, Wycheproof) and ML-KEM-768 (FIPS 203
                      in ref_mlkem.py against cryptography and Wycheproof)
3. generate_basic:    TestVectors/protocol/ (conversions, padding, bundle, x3dh, self-encryption,
                      safety-number, qr-payload)
4. generate_sessions: TestVectors/protocol/ (ratchet, sender-key)
5. generate_retry_notice: TestVectors/protocol/ (retry-notice)
6. generate_attachment: TestVectors/protocol/ (attachment; its self-check decrypts age files
                      built around our payloads with PyPI pyrage and the age command, each
                      skipped with a printed note when not installed, and reads the C2SP/CCTV
                      age vectors from $SESSIONKIT_AGE_VECTORS or /work/shared/vectors/age)
7. stale files:       protocol/*.json of a sessionkit-vectors schema that this run did not write
                      (version 1's, or a split file a former run needed) are removed

The Wycheproof files the self-checks read are taken from $SESSIONKIT_WYCHEPROOF, else
TestVectors/wycheproof/, else /work/shared/vectors/wycheproof. With --wycheproof-src DIR it
also re-copies the Wycheproof files unchanged into TestVectors/wycheproof/ (they are
committed; a normal run leaves them alone). Requires python3 and `pip install cryptography`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import convert_rfc  # noqa: E402
import generate_attachment  # noqa: E402
import generate_basic  # noqa: E402
import generate_retry_notice  # noqa: E402
import generate_sessions  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, ".."))


def remove_stale(protocol_out: str, written: set) -> list:
    removed = []
    for name in sorted(os.listdir(protocol_out)):
        path = os.path.join(protocol_out, name)
        if not name.endswith(".json") or name in written:
            continue
        try:
            with open(path) as f:
                schema = json.load(f).get("schema", "")
        except (OSError, ValueError):
            continue
        if isinstance(schema, str) and schema.startswith("sessionkit-vectors/"):
            os.remove(path)
            removed.append(name)
    return removed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--root", default=ROOT, help="the TestVectors folder to write into")
    ap.add_argument("--wycheproof-src", default=None,
                    help="re-copy the Wycheproof files from this folder into <root>/wycheproof/")
    args = ap.parse_args(argv)
    rfc_out = os.path.join(args.root, "rfc")
    protocol_out = os.path.join(args.root, "protocol")

    for name, n in convert_rfc.convert(convert_rfc.DEFAULT_SRC, rfc_out).items():
        print(f"rfc/{name:32} {n:5} tests")
    if args.wycheproof_src:
        convert_rfc.copy_wycheproof(args.wycheproof_src, os.path.join(args.root, "wycheproof"))
        print("wycheproof/ re-copied from", args.wycheproof_src)

    written = set()
    for name, (n, errors, size) in generate_basic.generate(args.seed, protocol_out).items():
        print(f"protocol/{name:27} {n:5} tests ({errors} error) {size:9} bytes")
        written.add(name)
    for name, n, size in generate_sessions.main(args.seed, protocol_out, verbose=False):
        print(f"protocol/{name:27} {n:5} tests {size:21} bytes")
        written.add(name)
    for name, (n, errors, size) in generate_retry_notice.generate(args.seed, protocol_out).items():
        print(f"protocol/{name:27} {n:5} tests ({errors} error) {size:9} bytes")
        written.add(name)
    for name, (n, errors, size) in generate_attachment.generate(args.seed, protocol_out).items():
        print(f"protocol/{name:27} {n:5} tests ({errors} error) {size:9} bytes")
        written.add(name)
    for name in remove_stale(protocol_out, written):
        print(f"removed stale protocol/{name}")

    for folder in ("rfc", "protocol"):
        d = os.path.join(args.root, folder)
        for name in sorted(os.listdir(d)):
            size = os.path.getsize(os.path.join(d, name))
            if size >= 1_000_000:
                print(f"warning: {folder}/{name} is {size} bytes (>= 1 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
