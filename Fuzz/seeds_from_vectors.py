#!/usr/bin/env python3
"""Adds seeds taken from the reference vectors (TestVectors/protocol) to Fuzz/corpus/<harness>/.

Called by `Fuzz/run.sh seeds` after each harness has written its own seeds. Each seed is
framed the way its harness reads input (see the comment at the top of each harness). Only
small entries are kept (at most MAX_SEED_BYTES bytes, at most MAX_SEEDS per harness), so the
committed corpora stay small.
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
    for test in tests("sender_key.json"):
        distribution = hexfield(test, "distribution")
        if distribution is not None:
            yield chunk(distribution)


def sender_key_message():
    for test in tests("sender_key.json"):
        for event in test.get("events", []):
            message = hexfield(event, "message")
            if message is not None:
                yield b"\x04" + chunk(message)


def ratchet_message():
    # Raw deliveries to Bob (base 0, op 6, party 1), framed as that harness reads them.
    for test in tests("ratchet.json"):
        for event in test.get("events", []):
            message = hexfield(event, "message")
            if message is not None and message[:1] == b"\x01":
                yield b"\x00\x06\x01" + chunk(message)


def prekey_message():
    # Raw deliveries (limits 0, op 4).
    for test in tests("ratchet.json"):
        for event in test.get("events", []):
            message = hexfield(event, "message")
            if message is not None and message[:1] == b"\x02":
                yield b"\x00\x04" + chunk(message)


def message_decoding():
    for test in tests("ratchet.json"):
        for event in test.get("events", []):
            message = hexfield(event, "message")
            if message is not None:
                yield message


def vector_loader():
    # Small whole files of both shapes.
    for name in ("qr_payload.json", "safety_number.json"):
        path = os.path.join(VECTORS, name)
        if os.path.exists(path):
            with open(path, "rb") as handle:
                data = handle.read()
            # Keep the first few tests only.
            document = json.loads(data)
            document["tests"] = document["tests"][:3]
            yield json.dumps(document).encode()


SOURCES = {name: function for name, function in globals().items()
           if callable(function) and name not in ("tests", "chunk", "hexfield", "main")}


def main(harnesses):
    for harness in harnesses:
        source = SOURCES.get(harness)
        if source is None:
            continue
        directory = os.path.join(ROOT, "Fuzz", "corpus", harness)
        os.makedirs(directory, exist_ok=True)
        written = 0
        for seed in source():
            if len(seed) > MAX_SEED_BYTES:
                continue
            name = "vector-" + hashlib.sha256(seed).hexdigest()[:20]
            with open(os.path.join(directory, name), "wb") as handle:
                handle.write(seed)
            written += 1
            if written >= MAX_SEEDS:
                break
        print(f"{harness}: {written} seeds from the vectors")


if __name__ == "__main__":
    main(sys.argv[1:])
