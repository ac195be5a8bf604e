"""Independent reference of SPEC.md §9's retry notice: B's encoding and A's checks.

    notice = 0x27 || Encode(B) || Encode(A) || u32(registration_id_B) || kind (1) || body || IK_B (32) || mac (32)
      kind 0x01 (pairwise): body = ratchet_key (32) || u32(n)
      kind 0x02 (group):    body = Encode(group) || chain_id (32) || u32(iteration)
    K   = HKDF(ZERO32, DH(x(IK_B).sk, x(IK_A).pk), "SessionKit Retry v2", 32)   (B's side)
        = HKDF(ZERO32, DH(x(IK_A).sk, x(IK_B).pk), "SessionKit Retry v2", 32)   (A's side)
    mac = HMAC(K, every byte of the notice before mac)

A's checks, in SPEC §9's order: the type byte (unsupportedVersion; an empty notice is
invalidMessage); lengths, a kind other than 1/2 and a registration id outside 1 … 2^31 − 1
(invalidMessage); Encode(B) = the address it came from and Encode(A) = A's own (invalidMessage);
IK_B a valid point (invalidKey); the MAC (invalidMessage); IK_B against A's trust record for B
(untrustedIdentity; no record: accepted, nothing recorded).

Built on spec_primitives only (PyPI `cryptography` + plain Python); no code shared with the
Swift library. Addresses are passed encoded (spec_primitives.encode_address).
"""
from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Optional

from spec_primitives import (ZERO32, SpecError, dh, ed25519_point_is_valid, ed25519_pub, ed_seed_to_x_private,
                             ed_to_x_public, encode_group, hkdf, hmac_sha256, read_u32, u32)

TYPE_NOTICE = 0x27
INFO_RETRY = b"SessionKit Retry v2"
KIND_PAIRWISE, KIND_GROUP = 0x01, 0x02
MAC_LEN = 32


@dataclass(frozen=True)
class Notice:
    addr_b: bytes                  # Encode(B)
    addr_a: bytes                  # Encode(A)
    registration_id: int
    kind: int
    ratchet_key: Optional[bytes] = None
    n: Optional[int] = None
    group_id: Optional[bytes] = None
    chain_id: Optional[bytes] = None
    iteration: Optional[int] = None
    ik_b: bytes = b""
    mac: bytes = b""


def body_pairwise(ratchet_key: bytes, n: int) -> bytes:
    assert len(ratchet_key) == 32
    return ratchet_key + u32(n)


def body_group(group_id: bytes, chain_id: bytes, iteration: int) -> bytes:
    assert len(chain_id) == 32
    return encode_group(group_id) + chain_id + u32(iteration)


def mac_key_b(b_seed: bytes, ik_a: bytes) -> bytes:
    """B's K: DH(x(IK_B).sk, x(IK_A).pk)."""
    return hkdf(ZERO32, dh(ed_seed_to_x_private(b_seed), ed_to_x_public(ik_a)), INFO_RETRY, 32)


def mac_key_a(a_seed: bytes, ik_b: bytes) -> bytes:
    """A's K: DH(x(IK_A).sk, x(IK_B).pk); invalidKey when IK_B is not a valid point."""
    return hkdf(ZERO32, dh(ed_seed_to_x_private(a_seed), ed_to_x_public(ik_b)), INFO_RETRY, 32)


def unsigned_notice(addr_b: bytes, addr_a: bytes, registration_id: int, kind: int, body: bytes, ik_b: bytes) -> bytes:
    """Every byte before the MAC (any field values, for forgeries too)."""
    return bytes([TYPE_NOTICE]) + addr_b + addr_a + u32(registration_id) + bytes([kind]) + body + ik_b


def make_notice(b_seed: bytes, ik_a: bytes, addr_b: bytes, addr_a: bytes, registration_id: int, kind: int,
                body: bytes) -> bytes:
    """B's notice to A (SPEC §9), MAC keyed by B's side of the DH."""
    head = unsigned_notice(addr_b, addr_a, registration_id, kind, body, ed25519_pub(b_seed))
    return head + hmac_sha256(mac_key_b(b_seed, ik_a), head)


def _address(data: bytes, off: int) -> int:
    """End offset of an Encode(address) at off (u8 length 1-255, uid, u32 device id)."""
    if off >= len(data):
        raise SpecError("invalidMessage")
    n = data[off]
    if n == 0 or off + 1 + n + 4 > len(data):
        raise SpecError("invalidMessage")
    return off + 1 + n + 4


def decode_notice(data: bytes) -> Notice:
    """Type byte, lengths, kind and registration id (no address, key or MAC checks)."""
    if len(data) == 0:
        raise SpecError("invalidMessage")
    if data[0] != TYPE_NOTICE:
        raise SpecError("unsupportedVersion")
    off_b = 1
    off_a = _address(data, off_b)
    off = off_rid = _address(data, off_a)
    if off + 5 > len(data):
        raise SpecError("invalidMessage")
    rid, kind = read_u32(data, off), data[off + 4]
    off += 5
    fields = {}
    if kind == KIND_PAIRWISE:
        if off + 36 > len(data):
            raise SpecError("invalidMessage")
        fields = {"ratchet_key": data[off:off + 32], "n": read_u32(data, off + 32)}
        off += 36
    elif kind == KIND_GROUP:
        if off >= len(data) or data[off] == 0 or off + 1 + data[off] + 36 > len(data):
            raise SpecError("invalidMessage")
        g = data[off]
        fields = {"group_id": data[off + 1:off + 1 + g], "chain_id": data[off + 1 + g:off + 33 + g],
                  "iteration": read_u32(data, off + 33 + g)}
        off += 1 + g + 36
    else:
        raise SpecError("invalidMessage")
    if off + 32 + MAC_LEN != len(data):
        raise SpecError("invalidMessage")
    if not 1 <= rid <= 2**31 - 1:
        raise SpecError("invalidMessage")
    return Notice(addr_b=data[off_b:off_a], addr_a=data[off_a:off_rid], registration_id=rid, kind=kind,
                  ik_b=data[off:off + 32], mac=data[off + 32:], **fields)


def process_notice(data: bytes, a_seed: bytes, from_addr: bytes, own_addr: bytes,
                   trusted_key: Optional[bytes] = None) -> Notice:
    """A's processing up to the outcome (SPEC §9's order). -> the decoded notice, or SpecError."""
    nt = decode_notice(data)
    if nt.addr_b != from_addr or nt.addr_a != own_addr:
        raise SpecError("invalidMessage")
    if not ed25519_point_is_valid(nt.ik_b):
        raise SpecError("invalidKey")
    k = mac_key_a(a_seed, nt.ik_b)
    if not hmac.compare_digest(hmac_sha256(k, data[:-MAC_LEN]), nt.mac):
        raise SpecError("invalidMessage")
    if trusted_key is not None and trusted_key != nt.ik_b:
        raise SpecError("untrustedIdentity")
    return nt
