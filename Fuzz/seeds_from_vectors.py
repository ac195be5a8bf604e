#!/usr/bin/env python3
"""Adds seeds taken from the reference vectors (TestVectors/protocol) to Fuzz/corpus/<harness>/.

Called by `Fuzz/run.sh seeds` after each harness has written its own seeds. Each seed is
framed the way its harness reads input (see the comment at the top of each harness). Only
small entries are kept (at most MAX_SEED_BYTES bytes, 4096 for whole files, at most MAX_SEEDS per
harness, spread evenly over the vectors), so the committed corpora stay small.
"""
import hashlib
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
VECTORS = os.path.join(ROOT, "TestVectors", "protocol")
MAX_SEED_BYTES = 2048
MAX_SEEDS = 24


def tests(name):
    path = os.path.join(VECTORS, name)
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return json.load(handle).get("tests", [])


def chunk(data):
    return len(data).to_bytes(2, "big") + data


def hexfield(test, key):
    value = test.get(key)
    return bytes.fromhex(value) if isinstance(value, str) else None


def padding():
    for test in tests("padding.json"):
        padded = hexfield(test, "padded")
        if padded is not None:
            yield b"\x00" + padded
        plaintext = hexfield(test, "plaintext")
        if plaintext is not None:
            yield b"\x01" + plaintext


def qr_payload():
    for test in tests("qr_payload.json"):
        payload = hexfield(test, "payload")
        if payload is not None:
            yield payload


def scannable_fingerprint():
    for test in tests("safety_number.json"):
        scannable = hexfield(test, "scannable")
        if scannable is not None:
            yield scannable


def self_encrypted():
    for test in tests("self_encryption.json"):
        sealed, context = hexfield(test, "sealed"), hexfield(test, "context")
        if sealed is not None and context is not None:
            yield b"\x00" + chunk(context) + sealed


def sender_key_distribution():
    # Framed as that harness reads items: a selector byte (0: processed for its first group),
    # then the chunk. The vectors' groups are not the harness's, so these reach the parser and
    # the group check.
    for name in ("sender_key.json", "sender_key_2.json"):
        for test in tests(name):
            distribution = hexfield(test, "distribution")
            if distribution is not None:
                yield b"\x00" + chunk(distribution)
            for entry in test.get("more_distributions", []) or []:
                more = hexfield(entry, "distribution")
                if more is not None:
                    yield b"\x00" + chunk(more)


def sender_key_message():
    # Raw deliveries (op 4).
    for name in ("sender_key.json", "sender_key_2.json"):
        for test in tests(name):
            for event in test.get("events", []):
                message = hexfield(event, "message")
                if message is not None:
                    yield b"\x04" + chunk(message)


def ratchet_events():
    for name in ("ratchet.json", "ratchet_2.json"):
        for test in tests(name):
            for event in test.get("events", []):
                message = hexfield(event, "message")
                if message is not None and len(message) <= MAX_SEED_BYTES:
                    yield message


def ratchet_message():
    # Raw deliveries to Bob (op 6, party 1), framed as that harness reads them: ratchet
    # messages (0x21) on a base after a reply (0), prekey messages (0x22) on a base where Alice
    # has had no reply (1, classic; 5, with a KEM prekey).
    for message in ratchet_events():
        if message[:1] == b"\x21":
            yield b"\x00\x06\x01" + chunk(message)
        elif message[:1] == b"\x22":
            yield (b"\x05" if len(message) > 1100 else b"\x01") + b"\x06\x01" + chunk(message)


def prekey_message():
    # Raw deliveries (settings 0, op 4, Alice's record).
    for message in ratchet_events():
        if message[:1] == b"\x22":
            yield b"\x00\x04\x00" + chunk(message)


def message_decoding():
    yield from ratchet_events()


def bundle():
    # Raw bundles (mode 0), valid and invalid ones.
    for test in tests("bundle.json"):
        encoded = hexfield(test, "bundle")
        if encoded is not None:
            yield b"\x00" + encoded


def vector_loader():
    # Small whole files of both shapes: the first tests of the small suites, and the smallest
    # tests of the version-2 protocol suites.
    for name in ("qr_payload.json", "safety_number.json"):
        path = os.path.join(VECTORS, name)
        if os.path.exists(path):
            with open(path, "rb") as handle:
                document = json.load(handle)
            document["tests"] = document["tests"][:3]
            yield json.dumps(document).encode()
    for name in ("bundle.json", "x3dh.json", "self_encryption.json", "sender_key.json", "ratchet.json"):
        path = os.path.join(VECTORS, name)
        if not os.path.exists(path):
            continue
        with open(path, "rb") as handle:
            document = json.load(handle)
        smallest = sorted(document.get("tests", []), key=lambda test: len(json.dumps(test)))
        for test in smallest[:2]:
            single = dict(document, tests=[test])
            yield json.dumps(single).encode()


def age_vectors():
    """(header lines, age file) of the uncompressed C2SP/CCTV age vectors in TestVectors/age."""
    folder = os.path.join(ROOT, "TestVectors", "age")
    if not os.path.isdir(folder):
        return
    for name in sorted(os.listdir(folder)):
        if "." in name:
            continue
        with open(os.path.join(folder, name), "rb") as handle:
            data = handle.read()
        header, _, body = data.partition(b"\n\n")
        lines = header.split(b"\n")
        if not lines[0].startswith(b"expect: ") or b"compressed: zlib" in lines:
            continue
        yield lines, body


def age_header():
    for lines, body in age_vectors():
        if b"armored: yes" not in lines:
            yield b"\x00\x05" + body


def age_armor():
    for lines, body in age_vectors():
        if b"armored: yes" in lines:
            yield b"\x00" + body


def age_bech32():
    for lines, _ in age_vectors():
        for line in lines:
            if line.startswith(b"identity: "):
                yield b"\x00" + line[len(b"identity: "):]


def age_hybrid():
    # The mlkem768x25519 files (mode 2: decrypted with CCTV's hybrid identity, which the
    # harness holds) and their identity strings (mode 0).
    for lines, body in age_vectors():
        if b"armored: yes" not in lines and b"mlkem768x25519" in body.split(b"\n---", 1)[0]:
            yield b"\x02\x05" + body
        for line in lines:
            if line.startswith(b"identity: AGE-SECRET-KEY-PQ-"):
                yield b"\x00" + line[len(b"identity: "):]


SOURCES = {name: function for name, function in globals().items()
           if callable(function) and name not in ("tests", "chunk", "hexfield", "main", "ratchet_events", "age_vectors")}
# Larger seeds for the vector-file harness (whole files).
MAX_SEED_BYTES_FOR = {"vector_loader": 4096}


def main(harnesses):
    for harness in harnesses:
        source = SOURCES.get(harness)
        if source is None:
            continue
        directory = os.path.join(ROOT, "Fuzz", "corpus", harness)
        os.makedirs(directory, exist_ok=True)
        limit = MAX_SEED_BYTES_FOR.get(harness, MAX_SEED_BYTES)
        eligible = []
        for seed in source():
            if len(seed) <= limit and seed not in eligible:
                eligible.append(seed)
        # At most MAX_SEEDS, spread evenly over the files' order (valid cases tend to come
        # first and error cases last), deterministically.
        if len(eligible) > MAX_SEEDS:
            eligible = [eligible[i * len(eligible) // MAX_SEEDS] for i in range(MAX_SEEDS)]
        for seed in eligible:
            name = "vector-" + hashlib.sha256(seed).hexdigest()[:20]
            with open(os.path.join(directory, name), "wb") as handle:
                handle.write(seed)
        print(f"{harness}: {len(eligible)} seeds from the vectors")


if __name__ == "__main__":
    main(sys.argv[1:])
