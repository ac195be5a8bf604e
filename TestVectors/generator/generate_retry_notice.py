#!/usr/bin/env python3
"""The `retry-notice` suite (SPEC.md §9 and §8): B's retry notice to A, and A's checks.

    python3 generate_retry_notice.py [--seed N] [--out DIR]

Writes retry_notice.json, deterministic from --seed through the Drbg label "retry-notice".
Every valid notice is made by ref_retry.make_notice with B's DH side, checked by A's side
(ref_retry.process_notice) and restated independently (the bytes of SPEC §9, the MAC keyed
from A's DH side); every error test is run through process_notice and must give its error.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import generate_basic as gb  # noqa: E402  (Edwards helpers: torsion points, point encoding)
import ref_retry as rr  # noqa: E402
from spec_primitives import (P, ZERO32, Drbg, SpecError, address_json, ed25519_point_is_valid, ed25519_pub,  # noqa: E402
                             ed_seed_to_x_private, ed_to_x_public, encode_address_json, hkdf,
                             hmac_sha256, random_address, u32, write_suite, x25519_pub)
from cryptography.hazmat.primitives.asymmetric import x25519 as _x25519  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.normpath(os.path.join(HERE, "..", "protocol"))
MASK255 = (1 << 255) - 1


def source(seed: int) -> str:
    return (f"TestVectors/generator/generate_retry_notice.py --seed {seed}; SPEC.md §9 retry notices "
            "(encode and A's checks in §9's order)")


def expect(name: str, *args) -> None:
    try:
        rr.process_notice(*args)
    except SpecError as e:
        assert e.name == name, f"expected {name}, got {e.name}"
        return
    raise AssertionError(f"expected {name}, got success")


def unchecked_mac_key(a_seed: bytes, ik_b: bytes):
    """The K an implementation that skipped IK_B's point check would compute: u = (1 + y) / (1 - y)
    mod p over the low 255 bits (reduced mod p; 1/0 taken as 0), then DH with A's key. None when
    that DH is all zero (a small-order u)."""
    y = (int.from_bytes(ik_b, "little") & MASK255) % P
    u = (1 + y) * pow((1 - y) % P, P - 2, P) % P
    try:
        out = _x25519.X25519PrivateKey.from_private_bytes(ed_seed_to_x_private(a_seed)).exchange(
            _x25519.X25519PublicKey.from_public_bytes(u.to_bytes(32, "little")))
    except ValueError:          # cryptography refuses an all-zero X25519 output
        return None
    return None if out == ZERO32 else hkdf(ZERO32, out, rr.INFO_RETRY, 32)


def suite_retry_notice(seed: int) -> list:
    dr = Drbg(seed, "retry-notice")
    tests = []

    def rid():
        return 1 + dr.int_below(2**31 - 1)

    def valid(b_seed, a_seed, b_addr, a_addr, reg, kind, comment, *, ratchet_key=None, n=None, group_id=None,
              chain_id=None, iteration=None, trusted=False, note=None) -> bytes:
        eb, ea = encode_address_json(b_addr), encode_address_json(a_addr)
        ik_a, ik_b = ed25519_pub(a_seed), ed25519_pub(b_seed)
        body = (rr.body_pairwise(ratchet_key, n) if kind == 1 else rr.body_group(group_id, chain_id, iteration))
        notice = rr.make_notice(b_seed, ik_a, eb, ea, reg, kind, body)
        # independent restatement of the bytes and of the MAC from A's side of the DH
        if kind == 1:
            want_body = ratchet_key + n.to_bytes(4, "big")
        else:
            want_body = bytes([len(group_id)]) + group_id + chain_id + iteration.to_bytes(4, "big")
        head = b"\x27" + eb + ea + reg.to_bytes(4, "big") + bytes([kind]) + want_body + ik_b
        dh_a = _x25519.X25519PrivateKey.from_private_bytes(ed_seed_to_x_private(a_seed)).exchange(
            _x25519.X25519PublicKey.from_public_bytes(ed_to_x_public(ik_b)))
        assert notice == head + hmac_sha256(hkdf(ZERO32, dh_a, b"SessionKit Retry v2", 32), head), comment
        nt = rr.process_notice(notice, a_seed, eb, ea, ik_b if trusted else None)
        assert (nt.addr_b, nt.addr_a, nt.registration_id, nt.kind, nt.ik_b) == (eb, ea, reg, kind, ik_b)
        if kind == 1:
            assert (nt.ratchet_key, nt.n, nt.group_id) == (ratchet_key, n, None)
        else:
            assert (nt.group_id, nt.chain_id, nt.iteration, nt.ratchet_key) == (group_id, chain_id, iteration, None)
        t = {"comment": comment, "b_identity_seed": b_seed.hex(), "a_identity_seed": a_seed.hex(),
             "from_address": b_addr, "to_address": a_addr, "registration_id": reg, "kind": kind}
        if kind == 1:
            t.update({"ratchet_key": ratchet_key.hex(), "n": n})
        else:
            t.update({"group_id": group_id.hex(), "chain_id": chain_id.hex(), "iteration": iteration})
        if trusted:
            t["trusted_key"] = ik_b.hex()
        t["notice"] = notice.hex()
        notes = [x for x in (note, gb.addr_note(b_addr, a_addr)) if x]
        if notes:
            t["note"] = "; ".join(notes)
        tests.append(t)
        return notice

    def pair_args():
        return dr.bytes(32), dr.bytes(32), random_address(dr), random_address(dr)

    # ---------------------------------------------------------------- valid notices
    kept = {}
    for i in range(3):
        b, a, bd, ad = pair_args()
        kept.setdefault("pairwise", (b, a, bd, ad, valid(b, a, bd, ad, rid(), 1, f"kind 1 (pairwise), random #{i}",
                                                         ratchet_key=x25519_pub(dr.bytes(32)),
                                                         n=dr.int_below(2**32), trusted=i == 1)))
    for i in range(3):
        b, a, bd, ad = pair_args()
        kept.setdefault("group", (b, a, bd, ad, valid(b, a, bd, ad, rid(), 2, f"kind 2 (group), random #{i}, 16-byte "
                                                      "group id", group_id=dr.bytes(16), chain_id=dr.bytes(32),
                                                      iteration=dr.int_below(2**32), trusted=i == 2)))
    for reg, what in ((1, "registration id 1"), (2**31 - 1, "registration id 2^31 - 1")):
        b, a, bd, ad = pair_args()
        valid(b, a, bd, ad, reg, 1, f"kind 1, {what}", ratchet_key=dr.bytes(32), n=0)
        valid(b, a, bd, ad, reg, 2, f"kind 2, {what}", group_id=dr.bytes(5), chain_id=dr.bytes(32), iteration=0)
    b, a, bd, ad = pair_args()
    valid(b, a, bd, ad, rid(), 1, "n = 0xffffffff", ratchet_key=dr.bytes(32), n=0xFFFFFFFF)
    valid(b, a, bd, ad, rid(), 2, "iteration 0xffffffff", group_id=dr.bytes(16), chain_id=dr.bytes(32),
          iteration=0xFFFFFFFF)
    for rk, what in ((ZERO32, "32 zero bytes (a small-order u)"), (b"\xff" * 32, "32 0xff bytes (bit 255 set, u ≥ p)"),
                     (P.to_bytes(32, "little"), "u = p (non-canonical)")):
        valid(b, a, bd, ad, rid(), 1, f"ratchet_key {what}: only compared, never checked as a key",
              ratchet_key=rk, n=dr.int_below(1000))
    valid(b, a, bd, ad, rid(), 2, "chain_id of 32 zero bytes: only compared", group_id=dr.bytes(16), chain_id=ZERO32,
          iteration=7)
    valid(b, a, bd, ad, rid(), 2, "1-byte group id", group_id=b"\x00", chain_id=dr.bytes(32), iteration=1)
    valid(b, a, bd, ad, rid(), 2, "255-byte group id", group_id=dr.bytes(255), chain_id=dr.bytes(32), iteration=2)
    valid(b, a, bd, ad, rid(), 2, "UTF-8 text group id", group_id="family chat ☕".encode(), chain_id=dr.bytes(32),
          iteration=3)
    valid(b, a, address_json("x" * 255, 0), address_json("y", 0xFFFFFFFF), rid(), 1,
          "B's uid of 255 bytes with device 0, A's 1-byte uid with device 0xffffffff",
          ratchet_key=dr.bytes(32), n=5)
    valid(b, a, address_json("é", 1), address_json("e\u0301", 1), rid(), 1,
          "B's uid é precomposed (c3 a9), A's e + U+0301 decomposed (65 cc 81)", ratchet_key=dr.bytes(32), n=6)
    valid(b, a, address_json("😀 用户", 3), address_json("3f2504e0-4f89-11d3-9a0c-0305e82c3301", 2), rid(), 2,
          "emoji/CJK uid and UUID uid", group_id=dr.bytes(16), chain_id=dr.bytes(32), iteration=9)
    s = dr.bytes(32)
    valid(s, s, address_json("carol", 2), address_json("carol", 1), rid(), 1,
          "two devices of one user sharing one identity key (DH of the key with itself)", ratchet_key=dr.bytes(32),
          n=3, trusted=True)
    c, a_c, bd_c, ad_c = pair_args()
    valid(c, a_c, bd_c, ad_c, rid(), 1, "a notice from an identity A holds no trust record for: accepted (and "
          "nothing recorded)", ratchet_key=dr.bytes(32), n=1)

    # ---------------------------------------------------------------- error tests
    def err(name: str, notice: bytes, a_seed: bytes, from_addr: dict, to_addr: dict, comment: str, *,
            trusted_key: bytes | None = None, note: str | None = None):
        expect(name, notice, a_seed, encode_address_json(from_addr), encode_address_json(to_addr), trusted_key)
        t = {"comment": comment, "notice": notice.hex(), "a_identity_seed": a_seed.hex(), "from_address": from_addr,
             "to_address": to_addr}
        if trusted_key is not None:
            t["trusted_key"] = trusted_key.hex()
        t["error"] = name
        notes = [x for x in (note, gb.addr_note(from_addr, to_addr)) if x]
        if notes:
            t["note"] = "; ".join(notes)
        tests.append(t)

    def forge(b_seed, a_seed, bd, ad, reg, kind, body, *, ik_b=None, key=None, addr_b=None, addr_a=None) -> bytes:
        """A notice with any fields; the MAC over its bytes with `key` (default: B's real K)."""
        head = rr.unsigned_notice(addr_b if addr_b is not None else encode_address_json(bd),
                                  addr_a if addr_a is not None else encode_address_json(ad), reg, kind, body,
                                  ed25519_pub(b_seed) if ik_b is None else ik_b)
        k = rr.mac_key_b(b_seed, ed25519_pub(a_seed)) if key is None else key
        return head + hmac_sha256(k, head)

    b1, a1, bd1, ad1, n1 = kept["pairwise"]
    b2, a2, bd2, ad2, n2 = kept["group"]
    body1 = rr.body_pairwise(dr.bytes(32), 77)
    body2 = rr.body_group(dr.bytes(16), dr.bytes(32), 78)

    # type byte
    err("invalidMessage", b"", a1, bd1, ad1, "empty notice")
    for tb in (0x00, 0x01, 0x21, 0x22, 0x26, 0x28, 0xFF):
        err("unsupportedVersion", bytes([tb]) + n1[1:], a1, bd1, ad1, f"first byte 0x{tb:02x}, otherwise a valid "
            "kind-1 notice")
    err("unsupportedVersion", b"\x26" + n2[1:], a2, bd2, ad2, "first byte 0x26, otherwise a valid kind-2 notice")
    err("unsupportedVersion", b"\x28", a1, bd1, ad1, "the single byte 0x28: the type byte before the length")
    # lengths
    eb1, ea1 = encode_address_json(bd1), encode_address_json(ad1)
    o_a = 1 + len(eb1)
    o_rid = o_a + len(ea1)
    for cut, what in ((1, "the type byte only"), (2, "the type byte and B's uid length"),
                      (o_a - 1, "inside Encode(B) (device id cut)"), (o_a + 1, "inside Encode(A)"),
                      (o_rid + 2, "inside the registration id"), (o_rid + 4, "before the kind byte"),
                      (o_rid + 5, "after the kind byte, no body"), (o_rid + 5 + 20, "inside the ratchet key"),
                      (len(n1) - 64, "no IK_B and no MAC"), (len(n1) - 32, "no MAC"), (len(n1) - 1, "MAC one byte short")):
        err("invalidMessage", n1[:cut], a1, bd1, ad1, f"kind-1 notice cut to {cut} bytes: {what}")
    err("invalidMessage", n1 + b"\x00", a1, bd1, ad1, "kind-1 notice with one extra byte")
    err("invalidMessage", n1 + n1[-32:], a1, bd1, ad1, "kind-1 notice with its MAC twice")
    for cut, what in ((len(n2) - 1, "MAC one byte short"), (len(n2) - 64 - 4, "iteration cut"),
                      (len(n2) - 64 - 36 - 16, "inside the group id")):
        err("invalidMessage", n2[:cut], a2, bd2, ad2, f"kind-2 notice cut to {cut} bytes: {what}")
    err("invalidMessage", n2 + b"\x00", a2, bd2, ad2, "kind-2 notice with one extra byte")
    err("invalidMessage", forge(b1, a1, bd1, ad1, rid(), 1, body1, addr_b=b"\x00" + u32(1)), a1, bd1, ad1,
        "Encode(B) with a uid length 0 (MAC by B over these bytes)")
    err("invalidMessage", forge(b1, a1, bd1, ad1, rid(), 1, body1, addr_b=bytes([250]) + b"bob" + u32(1)), a1, bd1,
        ad1, "Encode(B) whose length byte (250) runs past the uid (MAC by B over these bytes)")
    err("invalidMessage", forge(b2, a2, bd2, ad2, rid(), 2, b"\x00" + body2[17:]), a2, bd2, ad2,
        "kind 2 with a group id of length 0 (MAC by B over these bytes)")
    err("invalidMessage", forge(b2, a2, bd2, ad2, rid(), 2, bytes([200]) + body2[1:]), a2, bd2, ad2,
        "kind 2 whose group length byte (200) runs past the body (MAC by B over these bytes)")
    err("invalidMessage", forge(b1, a1, bd1, ad1, rid(), 2, body1), a1, bd1, ad1,
        "kind byte 2 with a kind-1 body (MAC by B over these bytes): the lengths do not add up")
    err("invalidMessage", forge(b2, a2, bd2, ad2, rid(), 1, body2), a2, bd2, ad2,
        "kind byte 1 with a kind-2 body (MAC by B over these bytes): the lengths do not add up")
    for kind in (0x00, 0x03, 0x81, 0xFF):
        err("invalidMessage", forge(b1, a1, bd1, ad1, rid(), kind, body1), a1, bd1, ad1,
            f"kind 0x{kind:02x} with a kind-1 body (MAC by B over these bytes)")
    err("invalidMessage", forge(b2, a2, bd2, ad2, rid(), 0x03, body2), a2, bd2, ad2,
        "kind 0x03 with a kind-2 body (MAC by B over these bytes)")
    for reg, what in ((0, "0"), (2**31, "2^31"), (0xFFFFFFFF, "0xffffffff")):
        err("invalidMessage", forge(b1, a1, bd1, ad1, reg, 1, body1), a1, bd1, ad1,
            f"registration id {what} (MAC by B over these bytes)")
    err("invalidMessage", forge(b2, a2, bd2, ad2, 0, 2, body2), a2, bd2, ad2, "kind 2, registration id 0 (MAC by B)")

    # addresses (the MAC is B's, valid: only the address check catches these)
    b_, a_, bd_, ad_ = pair_args()
    bd_ = address_json("bob", 4)
    ad_ = address_json("alice", 2)
    nt = valid(b_, a_, bd_, ad_, rid(), 1, "the notice of the address tests below", ratchet_key=dr.bytes(32), n=11)
    for frm, what in ((address_json("bob", 5), "another device of B"), (address_json("bob", 4 + 2**31), "device "
                      "id with bit 31 added"), (address_json("Bob", 4), "uid differing in case"),
                      (address_json("bob ", 4), "uid with a trailing space"), (ad_, "A's own address (reflected)")):
        err("invalidMessage", nt, a_, frm, ad_, f"arrived from {what}, not from Encode(B)")
    for own, what in ((address_json("alice", 3), "another device of A (same identity key: the MAC verifies)"),
                      (bd_, "B's address")):
        err("invalidMessage", nt, a_, bd_, own, f"A's own address is {what}, not Encode(A)")
    s = dr.bytes(32)
    nfc = valid(s, a_, address_json("é", 1), ad_, rid(), 1, "B's uid é precomposed, the notice of the next test",
                ratchet_key=dr.bytes(32), n=12)
    err("invalidMessage", nfc, a_, address_json("e\u0301", 1), ad_, "Encode(B) has é precomposed (c3 a9), the "
        "transport says e + U+0301 (65 cc 81): bytes differ")
    nfd = forge(s, a_, address_json("bob", 4), address_json("e\u0301", 2), rid(), 1, body1)
    err("invalidMessage", nfd, a_, address_json("bob", 4), address_json("é", 2), "Encode(A) has e + U+0301, A's own "
        "uid is é precomposed")

    # IK_B not a valid point; the MAC is the one A would accept without the point check
    torsion = gb.torsion_points()
    ikb = gb.decode_point(ed25519_pub(b_))

    def bad_point(ik: bytes, what: str, *, extra_note: str = ""):
        assert not ed25519_point_is_valid(ik)
        k = unchecked_mac_key(a_, ik)
        if k is None:
            k, how = rr.mac_key_b(b_, ed25519_pub(a_)), ("the DH with it is all zero, so the MAC is keyed with B's "
                                                          "real K")
        else:
            how = "the MAC is keyed with the K A computes if it skips the point check (u = (1 + y)/(1 - y))"
        err("invalidKey", forge(b_, a_, bd_, ad_, rid(), 1, body1, ik_b=ik, key=k), a_, bd_, ad_,
            f"IK_B {what}", note=how + extra_note)
        return k

    for order, idx in ((8, 1), (4, 2), (2, 4)):
        mixed = gb.encode_point(gb.ed_add(ikb, torsion[idx]))
        k = bad_point(mixed, f"= B's key plus a torsion point of order {order} (mixed order)",
                      extra_note="; it equals B's real K (X25519 clamps the torsion away), so without the check "
                                 "the notice would verify")
        assert k == rr.mac_key_b(b_, ed25519_pub(a_))
    for idx, what in ((0, "the identity (y = 1)"), (4, "the point of order 2 (y = p - 1)"), (2, "a point of order 4"),
                      (1, "a point of order 8")):
        bad_point(gb.encode_point(torsion[idx]), f"= {what}, small order")
    bad_point((P + 1).to_bytes(32, "little"), "with y = p + 1 (non-canonical)")
    bad_point(MASK255.to_bytes(32, "little"), "with y = 2^255 - 1 (non-canonical)")
    y = 2
    while gb.sp._recover_x(y, 0) is not None:
        y += 1
    bad_point(y.to_bytes(32, "little"), f"with y = {y}, not on the curve")

    # the MAC
    ok = forge(b_, a_, bd_, ad_, rid(), 1, body1)
    expect_ok = rr.process_notice(ok, a_, encode_address_json(bd_), encode_address_json(ad_))
    assert expect_ok.n == 77
    for i, what in ((len(ok) - 32, "first"), (len(ok) - 1, "last")):
        x = bytearray(ok)
        x[i] ^= 0x01
        err("invalidMessage", bytes(x), a_, bd_, ad_, f"the {what} MAC byte with its lowest bit flipped")
    err("invalidMessage", ok[:-32] + bytes(32), a_, bd_, ad_, "an all-zero MAC")
    kb = rr.mac_key_b(b_, ed25519_pub(a_))
    err("invalidMessage", ok[:-32] + hmac_sha256(kb, ok[1:-32]), a_, bd_, ad_, "MAC over the notice without its "
        "type byte")
    dh_b = _x25519.X25519PrivateKey.from_private_bytes(ed_seed_to_x_private(b_)).exchange(
        _x25519.X25519PublicKey.from_public_bytes(ed_to_x_public(ed25519_pub(a_))))
    err("invalidMessage", ok[:-32] + hmac_sha256(hkdf(ZERO32, dh_b, b"SessionKit Retry v1", 32), ok[:-32]), a_, bd_,
        ad_, "MAC keyed with the info \"SessionKit Retry v1\"")
    err("invalidMessage", ok[:-32] + hmac_sha256(dh_b, ok[:-32]), a_, bd_, ad_, "MAC keyed with the raw DH output "
        "(no HKDF)")
    err("invalidMessage", ok[:-32] + hmac_sha256(hkdf(ZERO32, dh_b, b"SessionKit Retry v2", 32), ok[:-64]),
        a_, bd_, ad_, "MAC over the bytes before IK_B (IK_B left out)")
    err("invalidMessage", ok, dr.bytes(32), bd_, ad_, "a valid notice for another identity of A (A reinstalled with a "
        "new identity key)")
    third = dr.bytes(32)
    err("invalidMessage", forge(b_, a_, bd_, ad_, rid(), 1, body1, key=rr.mac_key_b(third, ed25519_pub(a_))), a_, bd_,
        ad_, "IK_B is B's, the MAC is keyed by a third identity's DH with A")
    o_b = 1 + len(encode_address_json(bd_)) + len(encode_address_json(ad_))
    for off, what in ((o_b + 3, "the registration id (still in range)"), (o_b + 5, "the first ratchet key byte"),
                      (o_b + 5 + 35, "the last byte of n")):
        x = bytearray(ok)
        x[off] ^= 0x01
        err("invalidMessage", bytes(x), a_, bd_, ad_, f"a bit of {what} flipped after B computed the MAC")
    g = forge(b_, a_, bd_, ad_, rid(), 2, body2)
    o_g = o_b + 5
    for off, what in ((o_g + 1, "the group id"), (o_g + 17, "the chain id"), (o_g + 17 + 32 + 3, "the iteration")):
        x = bytearray(g)
        x[off] ^= 0x01
        err("invalidMessage", bytes(x), a_, bd_, ad_, f"kind 2: a bit of {what} flipped after B computed the MAC")

    # trust record
    other = ed25519_pub(dr.bytes(32))
    err("untrustedIdentity", ok, a_, bd_, ad_, "a valid notice, but A's trust record for B holds another key",
        trusted_key=other)
    c = dr.bytes(32)
    from_c = forge(c, a_, bd_, ad_, rid(), 1, body1)
    err("untrustedIdentity", from_c, a_, bd_, ad_, "a notice made by another identity (its own IK and a valid MAC) "
        "claiming B's address; A's trust record holds B's key", trusted_key=ed25519_pub(b_))
    neg = ed25519_pub(b_)[:31] + bytes([ed25519_pub(b_)[31] ^ 0x80])
    assert ed25519_point_is_valid(neg) and ed_to_x_public(neg) == ed_to_x_public(ed25519_pub(b_))
    err("untrustedIdentity", forge(b_, a_, bd_, ad_, rid(), 1, body1, ik_b=neg), a_, bd_, ad_,
        "IK_B with its sign bit flipped (−IK_B: a valid point with the same X25519 key, so B's MAC verifies); the "
        "trust record holds IK_B", trusted_key=ed25519_pub(b_),
        note="IK_B is compared with the trust record as 32 bytes, not through its X25519 key")

    # order
    r0 = forge(b_, a_, bd_, ad_, 0, 1, body1)
    err("unsupportedVersion", b"\x26" + r0[1:], a_, bd_, ad_, "type byte 0x26 and registration id 0: the type byte "
        "first")
    err("unsupportedVersion", b"\x26" + ok[1:10], a_, bd_, ad_, "type byte 0x26 and a 10-byte notice: the type byte "
        "first")
    small = gb.encode_point(torsion[2])
    mixed = gb.encode_point(gb.ed_add(ikb, torsion[1]))
    k_mixed = unchecked_mac_key(a_, mixed)
    err("invalidMessage", forge(b_, a_, bd_, ad_, 0, 1, body1, ik_b=mixed, key=k_mixed), a_, bd_, ad_,
        "registration id 0 and a mixed-order IK_B: the lengths and id come before the point")
    err("invalidMessage", forge(b_, a_, bd_, ad_, rid(), 3, body1, ik_b=small), a_, bd_, ad_,
        "kind 3 and a small-order IK_B: the kind comes before the point")
    with_mixed = forge(b_, a_, bd_, ad_, rid(), 1, body1, ik_b=mixed, key=k_mixed)
    err("invalidMessage", with_mixed, a_, address_json("bob", 5), ad_,
        "arrived from another device of B, and a mixed-order IK_B (MAC valid without the point check): the "
        "addresses come before the point")
    err("invalidMessage", with_mixed, a_, bd_, address_json("alice", 3),
        "A's own address differs, and a mixed-order IK_B: the addresses come before the point")
    x = bytearray(with_mixed)
    x[-1] ^= 0x01
    err("invalidKey", bytes(x), a_, bd_, ad_, "a mixed-order IK_B and a bad MAC: the point comes before the MAC")
    err("invalidKey", with_mixed, a_, bd_, ad_, "a mixed-order IK_B (MAC valid without the check) and a trust record "
        "holding B's real key: the point comes before the trust check", trusted_key=ed25519_pub(b_))
    x = bytearray(ok)
    x[-1] ^= 0x01
    err("invalidMessage", bytes(x), a_, bd_, ad_, "a bad MAC and a trust record holding another key: the MAC comes "
        "before the trust check", trusted_key=other)
    err("invalidMessage", ok, a_, address_json("bob", 5), ad_, "a valid MAC, arrived from another device of B, and a "
        "trust record holding another key: the address comes before the trust check", trusted_key=other)
    err("invalidMessage", r0, a_, bd_, ad_, "registration id 0 and a trust record holding another key",
        trusted_key=other)
    err("invalidMessage", bytes(x), a_, address_json("bob", 5), ad_, "arrived from another device of B and a bad "
        "MAC", note="both checks give invalidMessage: this test cannot tell their order apart, the point tests above do")
    return tests


def generate(seed: int, out_dir: str) -> dict:
    os.makedirs(out_dir, exist_ok=True)
    tests = suite_retry_notice(seed)
    numbered = []
    for i, t in enumerate(tests, 1):
        d = {"id": i}
        d.update(t)
        numbered.append(d)
    path = os.path.join(out_dir, "retry_notice.json")
    write_suite(path, "retry-notice", source(seed), numbered)
    size = os.path.getsize(path)
    assert size < 1_000_000
    return {"retry_notice.json": (len(numbered), sum("error" in t for t in numbered), size)}


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
