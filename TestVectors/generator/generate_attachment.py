#!/usr/bin/env python3
"""The `attachment` suite (SPEC.md §10 and §8): attachments as age v1 payloads.

    python3 generate_attachment.py [--seed N] [--out DIR]

Writes attachment.json (valid tests, pointer errors and ciphertext errors given as operations on
the valid tests' ciphertexts) and attachment_2.json (crafted STREAM violations as full hex
ciphertexts: too large to sit next to the rest). Deterministic from --seed through the Drbg
label "attachment". Before writing, ref_age.self_check runs: padded() against an independent
bucket list, Bech32 against age.md's example, the C2SP/CCTV X25519 age vectors through our
STREAM, and complete age files around our payloads decrypted by PyPI `pyrage` and by the `age`
command (each skipped with a printed note when missing), plus age files made by those two
decrypted by our code. Every test is also checked against ref_age.attachment_decrypt.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ref_age as ra  # noqa: E402
from spec_primitives import Drbg, SpecError, sha256, write_suite  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.normpath(os.path.join(HERE, "..", "protocol"))
HEX_CONTENT_MAX = 1024          # longer contents are given as content_length + content_seed (§8)
SUITE = "attachment"


def source(seed: int, what: str) -> str:
    return f"TestVectors/generator/generate_attachment.py --seed {seed}; {what}"


def apply_op(ct: bytes, op: dict) -> bytes:
    """The §8 ciphertext operations, exactly one per error test."""
    (name, arg), = op.items()
    if name == "truncate_to":
        assert 0 <= arg < len(ct)
        return ct[:arg]
    if name == "append":
        return ct + bytes.fromhex(arg)
    if name == "swap_chunks":
        i, j = arg
        body = ct[ra.NONCE_LEN:]
        chunks = [body[k:k + ra.ENC_CHUNK] for k in range(0, len(body), ra.ENC_CHUNK)]
        assert i != j and max(i, j) < len(chunks)
        chunks[i], chunks[j] = chunks[j], chunks[i]
        return ct[:ra.NONCE_LEN] + b"".join(chunks)
    if name == "flip_byte":
        x = bytearray(ct)
        x[arg] ^= 0xFF
        return bytes(x)
    raise AssertionError(name)


def expect(name: str, pointer: bytes, ciphertext: bytes) -> None:
    try:
        ra.attachment_decrypt(pointer, ciphertext)
    except SpecError as e:
        assert e.name == name, f"expected {name}, got {e.name}"
        return
    raise AssertionError(f"expected {name}, got success")


def suite_attachment(seed: int):
    """-> (tests of attachment.json, tests of attachment_2.json, self-check samples)."""
    dr = Drbg(seed, "attachment")
    tests = []           # attachment.json; ids 1 ... in order
    crafted = []         # attachment_2.json; ids continue
    made = {}            # id -> (file_key, nonce, content, ciphertext, pointer)
    refused = []         # (file_key, payload) that every age implementation must refuse

    def valid(n: int, comment: str, *, file_key=None, nonce=None, content=None, hex_content=None, note=None) -> int:
        file_key = dr.bytes(16) if file_key is None else file_key
        nonce = dr.bytes(16) if nonce is None else nonce
        t = {"comment": comment, "file_key": file_key.hex(), "nonce": nonce.hex()}
        if content is None:
            if (n <= HEX_CONTENT_MAX) if hex_content is None else hex_content:
                content = dr.bytes(n)
            else:
                cseed = dr.bytes(32)
                content = ra.content_from_seed(cseed, n)
                t["content_length"], t["content_seed"] = n, cseed.hex()
        assert len(content) == n
        if "content_seed" not in t:
            t["content"] = content.hex()
        ct, pointer = ra.attachment_encrypt(file_key, nonce, content)
        padded = ra.padded_length(n)
        # independent restatement: the pointer and the payload layout
        assert pointer == b"\x28" + file_key + sha256(ct) + n.to_bytes(8, "big") and len(pointer) == 57
        assert len(ct) == 16 + padded + 16 * max(1, -(-padded // 65536)) and ct[:16] == nonce
        assert ra.attachment_decrypt(pointer, ct) == content
        assert ra.payload_open(file_key, ct) == content + bytes(padded - n)
        t.update({"padded_length": padded, "ciphertext_sha256": sha256(ct).hex(), "pointer": pointer.hex()})
        if note:
            t["note"] = note
        tests.append(t)
        tid = len(tests)
        made[tid] = (file_key, nonce, content, ct, pointer)
        return tid

    def err(name: str, pointer: bytes, ciphertext, comment: str, note=None, into=None):
        """ciphertext: bytes (written as hex) or (test id, op)."""
        if isinstance(ciphertext, tuple):
            tid, op = ciphertext
            ct = apply_op(made[tid][3], op)
            ct_json = {"test": tid}
            ct_json.update(op)
        else:
            ct, ct_json = ciphertext, ciphertext.hex()
        expect(name, pointer, ct)
        t = {"comment": comment, "pointer": pointer.hex(), "ciphertext": ct_json, "error": name}
        if note:
            t["note"] = note
        (tests if into is None else into).append(t)
        return ct

    # ---------------------------------------------------------------- valid tests
    buckets = ra.bucket_list()
    t_empty = valid(0, "empty content: padded to 512 bytes, one final chunk")
    valid(1, "1 byte")
    valid(511, "511 bytes")
    t_512 = valid(512, "512 bytes: padded(512) = 512, no padding byte")
    t_513 = valid(513, "513 bytes: the next bucket, 537")
    for n in (536, 537, 538):
        valid(n, f"{n} bytes (buckets 537 and 563 around it)")
    for _ in range(3):
        n = 2 + dr.int_below(HEX_CONTENT_MAX - 1)
        valid(n, f"{n} bytes (random length), padded to {ra.padded_length(n)}")
    below = max(b for b in buckets if b <= 65536)
    above = min(b for b in buckets if b > 65536)
    assert (below, above) == (62886, 66030) and 65536 not in buckets
    valid(below, f"{below} bytes: the largest bucket below 64 KiB, exactly (one chunk of {below} bytes)",
          note="no b_k is a multiple of 65,536 (checked for every b_k < 2^64), so an attachment's final chunk is "
               "never full; the CCTV age vectors cover full final chunks")
    valid(below + 1, f"{below + 1} bytes: padded to {above}, two chunks (65,536 + {above - 65536})")
    valid(65535, f"65,535 bytes: padded to {above}")
    t_2chunk = valid(65536, f"65,536 bytes (64 KiB), content as hex: padded to {above}, two chunks (65,536 + "
                     f"{above - 65536})", hex_content=True)
    valid(65537, f"65,537 bytes: padded to {above}")
    valid(above, f"{above} bytes: a bucket exactly, two chunks")
    valid(above + 1, f"{above + 1} bytes: padded to {ra.padded_length(above + 1)}")
    b2_below = max(b for b in buckets if b <= 2 * 65536)
    b2_above = min(b for b in buckets if b > 2 * 65536)
    valid(b2_below, f"{b2_below} bytes: the largest bucket below 128 KiB, exactly (two chunks, the final one "
          f"{b2_below - 65536} bytes)")
    valid(b2_below + 1, f"{b2_below + 1} bytes: padded to {b2_above}, three chunks")
    t_3chunk = valid(2 * 65536, f"131,072 bytes (128 KiB): padded to {b2_above}, three chunks (65,536 + 65,536 + "
                     f"{b2_above - 2 * 65536})")
    valid(3 * 65536, f"196,608 bytes (192 KiB): padded to {ra.padded_length(3 * 65536)}, four chunks")
    t_mib = valid(2_000_000, f"2,000,000 bytes: padded to {ra.padded_length(2_000_000)}, "
                  f"{len(ra.chunk_sizes(ra.padded_length(2_000_000)))} chunks")
    valid(2 * 1024 * 1024, f"2 MiB (2,097,152 bytes): padded to {ra.padded_length(2**21)}, "
          f"{len(ra.chunk_sizes(ra.padded_length(2**21)))} chunks")
    valid(100, "file key and nonce all zero bytes", file_key=bytes(16), nonce=bytes(16))
    valid(100, "file key and nonce all 0xff bytes", file_key=b"\xff" * 16, nonce=b"\xff" * 16)
    fk, content = dr.bytes(16), dr.bytes(700)
    a = valid(700, "the same file key and content as the next test, one nonce", file_key=fk, content=content)
    b = valid(700, "the same file key and content as the test before, another nonce: another ciphertext",
              file_key=fk, content=content)
    assert made[a][3] != made[b][3]
    # n is not in the ciphertext: contents that differ only by trailing zero bytes inside one bucket
    fk, nonce, content = dr.bytes(16), dr.bytes(16), dr.bytes(300)
    z1 = valid(300, "300 bytes; the next two tests have the same file key and nonce", file_key=fk, nonce=nonce,
               content=content)
    z2 = valid(301, "the content of the test before plus one zero byte: the same ciphertext (padding is zero "
               "bytes), a pointer that differs only in n", file_key=fk, nonce=nonce, content=content + b"\x00",
               note="the pointer's n is authenticated only by the message that carries the pointer (SPEC §10)")
    z3 = valid(512, "the content of the first of these three tests plus 212 zero bytes (512 bytes, no padding "
               "needed): the same ciphertext again", file_key=fk, nonce=nonce, content=content + bytes(212))
    assert made[z1][3] == made[z2][3] == made[z3][3]

    # ---------------------------------------------------------------- pointer decoding
    fk, nonce, content, ct0, p0 = made[t_empty]
    err("invalidPayload", b"", ct0, f"empty pointer (the ciphertext of test {t_empty})")
    for tb in (0x00, 0x01, 0x22, 0x26, 0x27, 0x29, 0xFF):
        err("unsupportedVersion", bytes([tb]) + p0[1:], ct0, f"pointer with first byte 0x{tb:02x}, otherwise the "
            f"pointer of test {t_empty}")
    err("unsupportedVersion", b"\x00", ct0, "the single byte 0x00: the type byte is checked before the length")
    err("unsupportedVersion", b"\x27" + p0[1:-1], ct0, "first byte 0x27 and 56 bytes: the type byte first")
    err("invalidPayload", b"\x28", ct0, "the type byte 0x28 alone")
    err("invalidPayload", p0[:-1], ct0, f"the pointer of test {t_empty} without its last byte (56 bytes)")
    err("invalidPayload", p0 + b"\x00", ct0, f"the pointer of test {t_empty} with one extra byte (58 bytes)")
    err("invalidPayload", p0[:-8] + bytes(4), ct0, "n as a u32 instead of a u64 (53 bytes)")
    err("invalidPayload", p0 + p0, ct0, "the pointer twice (114 bytes)")

    # ---------------------------------------------------------------- pointer contents
    def pointer(file_key=None, digest=None, n=None, of=None) -> bytes:
        k, _, c, ct, _ = made[of]
        return ra.encode_pointer(k if file_key is None else file_key, sha256(ct) if digest is None else digest,
                                 len(c) if n is None else n)

    # (pointer-content errors use small ciphertexts: they are given as hex)
    k5 = made[t_512][0]
    err("invalidMessage", pointer(of=t_512, file_key=bytes([k5[0] ^ 1]) + k5[1:]), made[t_512][3],
        f"the file key of test {t_512} with its lowest bit flipped (length and digest right: the tag fails)")
    err("invalidMessage", pointer(of=t_empty, file_key=made[t_512][0]), ct0,
        f"the ciphertext of test {t_empty} under the file key of test {t_512}")
    d = sha256(made[t_513][3])
    err("invalidMessage", pointer(of=t_513, digest=d[:31] + bytes([d[31] ^ 0x80])), made[t_513][3],
        f"the pointer of test {t_513} with one digest bit flipped (the chunk authenticates)")
    err("invalidMessage", pointer(of=t_empty, digest=bytes(32)), ct0, f"the pointer of test {t_empty} with an all-zero "
        "digest")
    err("invalidMessage", pointer(of=t_512, n=513), made[t_512][3],
        f"the pointer of test {t_512} with n = 513: padded(513) = 537, the ciphertext is that of 512 bytes")
    err("invalidMessage", pointer(of=t_513, n=512), made[t_513][3],
        f"the pointer of test {t_513} with n = 512: padded(512) = 512, the ciphertext is that of 537 bytes")
    err("invalidMessage", pointer(of=t_513, n=0), made[t_513][3],
        f"the pointer of test {t_513} with n = 0: the ciphertext is 25 bytes longer than padded(0) needs")
    err("invalidMessage", pointer(of=t_empty, n=ra.U64_MAX), ct0,
        "n = 2^64 - 1: padded(n) would exceed 2^64 - 1")
    err("invalidMessage", pointer(of=t_empty, n=buckets[-1] + 1), ct0,
        f"n = {buckets[-1] + 1}, one more than the largest b_k below 2^64: padded(n) would exceed 2^64 - 1")
    err("invalidMessage", pointer(of=t_empty, n=buckets[-1]), ct0,
        f"n = {buckets[-1]}, the largest b_k below 2^64: padded(n) = n, far longer than the ciphertext "
        "(its payload length still fits in a u64)")
    assert ra.payload_length(buckets[-1]) < 2**64
    # a valid age payload of the same content and key under another nonce: only the digest tells
    other = ra.payload_seal(fk, dr.bytes(16), bytes(512))
    assert ra.payload_open(fk, other) == bytes(512)
    err("invalidMessage", p0, other, f"a valid age payload of the padded content of test {t_empty} under its file "
        "key, but with another nonce: every chunk authenticates, the digest differs")
    err("invalidMessage", p0, made[z1][3], f"the pointer of test {t_empty} with the (authentic-length) ciphertext of "
        f"test {z1}: the digest differs (and so does the file key)")

    # ---------------------------------------------------------------- ciphertext operations
    def ops(tid: int, op: dict, comment: str, *, redigest=True):
        """redigest: the pointer carries the SHA-256 of the modified ciphertext, so only the length
        and STREAM rules can catch it; otherwise the original pointer (digest differs too)."""
        k, _, c, ct, p = made[tid]
        bad = apply_op(ct, op)
        ptr = ra.encode_pointer(k, sha256(bad), len(c)) if redigest else p
        note = ("the pointer's digest is the SHA-256 of the modified ciphertext: the length, the tags and the "
                "final flag must catch it" if redigest else "the pointer of the valid test (the digest differs too)")
        err("invalidMessage", ptr, (tid, op), comment, note)
        refused.append((k, bad))

    ct3 = made[t_3chunk][3]
    L3 = len(ct3)
    E = ra.ENC_CHUNK
    assert L3 == 16 + 2 * E + (ra.padded_length(2 * 65536) - 2 * 65536) + 16
    for cut, what in ((0, "nothing left"), (15, "part of the nonce"), (16, "the nonce only"),
                      (16 + E, "at a chunk boundary: chunk 0 only, no final chunk"),
                      (16 + 2 * E, "at a chunk boundary: chunks 0 and 1, the final chunk dropped"),
                      (16 + E + 777, "mid-chunk (inside chunk 1)"),
                      (L3 - 1, "the last byte removed"), (L3 - 16, "the final chunk's tag removed")):
        ops(t_3chunk, {"truncate_to": cut}, f"test {t_3chunk} (three chunks) truncated to {cut} bytes: {what}")
    ops(t_3chunk, {"truncate_to": 16 + 2 * E}, f"test {t_3chunk} truncated at the boundary before the final chunk, "
        "with the original pointer", redigest=False)
    ops(t_3chunk, {"append": "00"}, f"test {t_3chunk} with one byte appended")
    ops(t_3chunk, {"append": "00" * 16}, f"test {t_3chunk} with 16 zero bytes appended (the size of an empty chunk)")
    ops(t_3chunk, {"append": dr.bytes(40).hex()}, f"test {t_3chunk} with 40 random bytes appended")
    ops(t_3chunk, {"append": "00"}, f"test {t_3chunk} with one byte appended, original pointer", redigest=False)
    for i, j in ((0, 1), (1, 2), (0, 2)):
        ops(t_3chunk, {"swap_chunks": [i, j]}, f"test {t_3chunk} with chunks {i} and {j} swapped"
            + (" (the short final chunk moves)" if 2 in (i, j) else " (two full chunks: same length)"))
    ops(t_3chunk, {"swap_chunks": [0, 1]}, f"test {t_3chunk} with chunks 0 and 1 swapped, original pointer",
        redigest=False)
    for off, what in ((0, "the first nonce byte (another payload key)"), (15, "the last nonce byte"),
                      (16, "the first ciphertext byte of chunk 0"),
                      (16 + 65536, "the first tag byte of chunk 0"), (16 + E - 1, "the last tag byte of chunk 0"),
                      (16 + E + 65535, "the last ciphertext byte of chunk 1"),
                      (16 + 2 * E, "the first byte of the final chunk"),
                      (L3 - 17, "the last ciphertext byte of the final chunk"),
                      (L3 - 16, "the first tag byte of the final chunk"), (L3 - 1, "the last tag byte of the final chunk")):
        ops(t_3chunk, {"flip_byte": off}, f"test {t_3chunk} with byte {off} flipped: {what}")
    ops(t_3chunk, {"flip_byte": L3 - 1}, f"test {t_3chunk}, last tag byte flipped, original pointer", redigest=False)
    L2 = len(made[t_2chunk][3])
    ops(t_2chunk, {"truncate_to": 16 + E}, f"test {t_2chunk} (two chunks) truncated to its full first chunk: a "
        "complete 64 KiB chunk that is not marked final")
    ops(t_2chunk, {"swap_chunks": [0, 1]}, f"test {t_2chunk} with its two chunks swapped")
    ops(t_2chunk, {"flip_byte": L2 - 1}, f"test {t_2chunk}, last tag byte of the final chunk flipped")
    ops(t_2chunk, {"flip_byte": 16 + E}, f"test {t_2chunk}, first byte of the final chunk flipped")
    L0 = len(ct0)
    ops(t_empty, {"truncate_to": L0 - 1}, f"test {t_empty} (one chunk) without its last byte")
    ops(t_empty, {"flip_byte": 16}, f"test {t_empty}, first ciphertext byte flipped")
    ops(t_empty, {"flip_byte": L0 - 16}, f"test {t_empty}, first tag byte flipped")
    ops(t_empty, {"append": "00" * 16}, f"test {t_empty} with 16 zero bytes appended")
    Lm = len(made[t_mib][3])
    nm = len(ra.chunk_sizes(ra.padded_length(2_000_000)))
    ops(t_mib, {"flip_byte": 16 + 17 * E - 5}, f"test {t_mib} ({nm} chunks), a tag byte of chunk 16 flipped")
    ops(t_mib, {"swap_chunks": [5, 6]}, f"test {t_mib}, chunks 5 and 6 swapped")
    ops(t_mib, {"swap_chunks": [0, nm - 1]}, f"test {t_mib}, chunk 0 and the short final chunk swapped")
    ops(t_mib, {"truncate_to": 16 + (nm - 1) * E}, f"test {t_mib} truncated at the chunk boundary before its final "
        "chunk")
    ops(t_mib, {"truncate_to": Lm - 1000}, f"test {t_mib} truncated inside its final chunk")

    # ---------------------------------------------------------------- crafted STREAM violations (hex)
    def seal_chunks(file_key: bytes, nonce: bytes, parts: list) -> bytes:
        """parts: [(plaintext, counter, final flag)]"""
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
        a = ChaCha20Poly1305(ra.payload_key(file_key, nonce))
        return nonce + b"".join(a.encrypt(ra.chunk_nonce(c, f), pt, None) for pt, c, f in parts)

    def crafted_err(n: int, parts_of, comment: str, into):
        file_key, nonce = dr.bytes(16), dr.bytes(16)
        content = dr.bytes(n)
        padded = content + bytes(ra.padded_length(n) - n)
        ct = seal_chunks(file_key, nonce, parts_of(padded))
        assert len(ct) == ra.payload_length(len(padded)), comment       # the length is right
        err("invalidMessage", ra.encode_pointer(file_key, sha256(ct), n), ct, comment,
            "a crafted payload of the right length whose digest the pointer carries: only the STREAM rules "
            "(counters, final flag) catch it", into=into)
        refused.append((file_key, ct))

    crafted_err(300, lambda p: [(p, 0, False)], "one chunk of 512 bytes not marked final (flag byte 0x00)", tests)
    crafted_err(300, lambda p: [(p, 1, True)], "one final chunk with counter 1 instead of 0", tests)
    crafted_err(300, lambda p: [(p, 2**88 - 1, True)], "one final chunk with counter 2^88 - 1", tests)
    big = ra.padded_length(65537)
    crafted_err(65537, lambda p: [(p[:65536], 0, True), (p[65536:], 1, True)],
                f"two chunks (65,536 + {big - 65536} bytes), both marked final: data after the final chunk", crafted)
    crafted_err(65537, lambda p: [(p[:65536], 0, False), (p[65536:], 1, False)],
                "two chunks, neither marked final", crafted)
    crafted_err(65537, lambda p: [(p[:65536], 1, False), (p[65536:], 0, True)],
                "two chunks with their counters swapped (1 then 0; the final flag right)", crafted)
    crafted_err(65537, lambda p: [(p[:big - 65536], 0, False), (p[big - 65536:], 1, True)],
                f"two chunks cut the other way round ({big - 65536} + 65,536 bytes, same total length)", crafted)

    samples = [(k, nonce, c + bytes(ra.padded_length(len(c)) - len(c))) for k, nonce, c, _, _ in made.values()]
    return tests, crafted, samples, refused


def generate(seed: int, out_dir: str) -> dict:
    os.makedirs(out_dir, exist_ok=True)
    tests, crafted, samples, refused = suite_attachment(seed)
    report = ra.self_check(samples, Drbg(seed, "attachment/age-self-check"), refused)
    print("attachment self-checks:", "; ".join(f"{k} {v}" for k, v in report.items()))
    counts = {}
    next_id = 1
    for name, ts, what in (("attachment.json", tests, "valid tests, pointer errors, ciphertext operations"),
                           ("attachment_2.json", crafted, "crafted STREAM violations (full hex ciphertexts)")):
        numbered = []
        for i, t in enumerate(ts, next_id):
            d = {"id": i}
            d.update(t)
            numbered.append(d)
        path = os.path.join(out_dir, name)
        write_suite(path, SUITE, source(seed, f"SPEC.md §10 attachments as age v1 payloads: {what} (ids continue "
                                              "across the attachment*.json files)"), numbered)
        size = os.path.getsize(path)
        assert size < 1_000_000, (name, size)
        counts[name] = (len(numbered), sum("error" in t for t in numbered), size)
        next_id += len(numbered)
    # the ops refer to valid tests of attachment.json by id: check the references resolve there
    with open(os.path.join(out_dir, "attachment.json")) as f:
        d = json.load(f)
    by_id = {t["id"]: t for t in d["tests"]}
    for t in d["tests"]:
        if isinstance(t.get("ciphertext"), dict):
            ref = by_id[t["ciphertext"]["test"]]
            assert "error" not in ref and len(t["ciphertext"]) == 2
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    for name, (n, e, size) in generate(args.seed, args.out).items():
        print(f"{name:32} {n:4} tests ({e} error) {size:8} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
