"""Independent reference of SPEC.md §3: the bundle encoding, the initiator's bundle checks and
X3DH with an optional ML-KEM-768 prekey (both sides), with §9's optional registration id
(flag bit 2) in the bundle and in the prekey prefix P.

Built only on spec_primitives (PyPI `cryptography` + plain Python) and ref_mlkem (FIPS 203 in
plain Python; the responder decapsulates with `cryptography`, so every KEM vector is checked
by two implementations). It shares no code with the Swift library. Used by generate_basic.py
(`bundle`, `x3dh`) and ref_ratchet.py (`ratchet`).

Addresses are passed encoded (spec_primitives.encode_address).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import ref_mlkem
from spec_primitives import (FF32, ZERO32, SpecError, dh, ed25519_pub, ed25519_sign, ed25519_verify,
                             ed_seed_to_x_private, ed_to_x_public, encode_kem, encode_x25519, hkdf,
                             is_canonical_x25519, read_u32, sha256, u32, x25519_pub)

LABEL_SPK = b"SessionKit SPK v2"
LABEL_KEM = b"SessionKit KEM v2"
INFO_X3DH = b"SessionKit X3DH v2"
INFO_PQXDH = b"SessionKit PQXDH v2"

TYPE_BUNDLE = 0x26
BUNDLE_BASE_LEN = 1 + 32 + 4 + 32 + 64 + 1                   # 134
BUNDLE_OPK_LEN = 4 + 32                                      # 36
BUNDLE_KEM_LEN = 4 + ref_mlkem.EK_LEN + 64                   # 1252
BUNDLE_RID_LEN = 4                                           # u32(registration_id), flags bit 2 (§9)
PREFIX_BASE_LEN = 32 + 32 + 4 + 1                            # P without the optional parts: 69
PREFIX_KEM_LEN = 4 + ref_mlkem.CT_LEN                        # 1092
PREFIX_RID_LEN = 4                                           # u32(registration_id), flags bit 2 (§9)
REGISTRATION_ID_MIN, REGISTRATION_ID_MAX = 1, 2**31 - 1      # §9: 1 <= id <= 2^31 - 1


def registration_id_is_valid(rid: int) -> bool:
    return REGISTRATION_ID_MIN <= rid <= REGISTRATION_ID_MAX


# ---------------------------------------------------------------- signatures
def spk_signed_bytes(spk_pub: bytes, kem: int) -> bytes:
    return LABEL_SPK + encode_x25519(spk_pub) + bytes([kem])


def kem_signed_bytes(ek: bytes) -> bytes:
    return LABEL_KEM + encode_kem(ek)


def spk_signature(identity_seed: bytes, spk_pub: bytes, kem: int) -> bytes:
    return ed25519_sign(identity_seed, spk_signed_bytes(spk_pub, kem))


def kem_signature(identity_seed: bytes, ek: bytes) -> bytes:
    return ed25519_sign(identity_seed, kem_signed_bytes(ek))


# ---------------------------------------------------------------- bundle
@dataclass(frozen=True)
class Bundle:
    ik: bytes
    spk_id: int
    spk: bytes
    spk_sig: bytes
    opk_id: Optional[int] = None
    opk: Optional[bytes] = None
    kem_id: Optional[int] = None
    kem_ek: Optional[bytes] = None
    kem_sig: Optional[bytes] = None
    registration_id: Optional[int] = None      # §9, flags bit 2; not signed

    @property
    def flags(self) -> int:
        return ((1 if self.opk is not None else 0) | (2 if self.kem_ek is not None else 0)
                | (4 if self.registration_id is not None else 0))

    @property
    def kem_bit(self) -> int:
        return 1 if self.kem_ek is not None else 0


def make_bundle(identity_seed: bytes, spk_id: int, spk_sk: bytes, opk_id: Optional[int] = None,
                opk_sk: Optional[bytes] = None, kem_id: Optional[int] = None,
                kem_seed: Optional[bytes] = None, *, spk_kem_bit: Optional[int] = None,
                registration_id: Optional[int] = None) -> Bundle:
    """Bob's bundle from his private keys (signatures are deterministic Ed25519; the ek is ML-KEM
    key generation from kem_seed). spk_kem_bit overrides the signed kem bit (forgeries only).
    registration_id (§9) sets flags bit 2; it is signed by nothing."""
    spk = x25519_pub(spk_sk)
    kem = 1 if kem_seed is not None else 0
    if spk_kem_bit is not None:
        kem = spk_kem_bit
    ek = ref_mlkem.ek_from_seed(kem_seed) if kem_seed is not None else None
    return Bundle(ik=ed25519_pub(identity_seed), spk_id=spk_id, spk=spk,
                  spk_sig=spk_signature(identity_seed, spk, kem),
                  opk_id=opk_id if opk_sk is not None else None,
                  opk=x25519_pub(opk_sk) if opk_sk is not None else None,
                  kem_id=kem_id if kem_seed is not None else None, kem_ek=ek,
                  kem_sig=kem_signature(identity_seed, ek) if ek is not None else None,
                  registration_id=registration_id)


def encode_bundle(b: Bundle, *, flags: Optional[int] = None) -> bytes:
    out = bytes([TYPE_BUNDLE]) + b.ik + u32(b.spk_id) + b.spk + b.spk_sig
    out += bytes([b.flags if flags is None else flags])
    if b.opk is not None:
        out += u32(b.opk_id) + b.opk
    if b.kem_ek is not None:
        out += u32(b.kem_id) + b.kem_ek + b.kem_sig
    if b.registration_id is not None:
        out += u32(b.registration_id)
    return out


def decode_bundle(data: bytes) -> Bundle:
    """SPEC §3 decoding: empty -> invalidPayload; another first byte -> unsupportedVersion;
    a wrong length, a flag bit outside 0-2 or a registration id outside 1 ... 2^31 - 1 (§9)
    -> invalidPayload. No key checks here."""
    if len(data) == 0:
        raise SpecError("invalidPayload")
    if data[0] != TYPE_BUNDLE:
        raise SpecError("unsupportedVersion")
    if len(data) < BUNDLE_BASE_LEN:
        raise SpecError("invalidPayload")
    flags = data[BUNDLE_BASE_LEN - 1]
    if flags & ~0x07:
        raise SpecError("invalidPayload")
    want = (BUNDLE_BASE_LEN + (BUNDLE_OPK_LEN if flags & 1 else 0) + (BUNDLE_KEM_LEN if flags & 2 else 0)
            + (BUNDLE_RID_LEN if flags & 4 else 0))
    if len(data) != want:
        raise SpecError("invalidPayload")
    ik, spk_id, spk, spk_sig = data[1:33], read_u32(data, 33), data[37:69], data[69:133]
    off = BUNDLE_BASE_LEN
    opk_id = opk = kem_id = ek = kem_sig = rid = None
    if flags & 1:
        opk_id, opk = read_u32(data, off), data[off + 4:off + 36]
        off += BUNDLE_OPK_LEN
    if flags & 2:
        kem_id = read_u32(data, off)
        ek = data[off + 4:off + 4 + ref_mlkem.EK_LEN]
        kem_sig = data[off + 4 + ref_mlkem.EK_LEN:off + BUNDLE_KEM_LEN]
        off += BUNDLE_KEM_LEN
    if flags & 4:
        rid = read_u32(data, off)
        if not registration_id_is_valid(rid):
            raise SpecError("invalidPayload")
        off += BUNDLE_RID_LEN
    assert off == len(data)
    return Bundle(ik=ik, spk_id=spk_id, spk=spk, spk_sig=spk_sig, opk_id=opk_id, opk=opk,
                  kem_id=kem_id, kem_ek=ek, kem_sig=kem_sig, registration_id=rid)


def check_bundle(b: Bundle) -> None:
    """The initiator's bundle checks, in SPEC §3's order: spk_sig with kem = flags bit 1, then
    kem_sig (invalidSignature); then SPK_B and OPK_B canonical and PQPK_B a valid ek (invalidKey)."""
    if not ed25519_verify(b.ik, b.spk_sig, spk_signed_bytes(b.spk, b.kem_bit)):
        raise SpecError("invalidSignature")
    if b.kem_ek is not None and not ed25519_verify(b.ik, b.kem_sig, kem_signed_bytes(b.kem_ek)):
        raise SpecError("invalidSignature")
    if not is_canonical_x25519(b.spk):
        raise SpecError("invalidKey")
    if b.opk is not None and not is_canonical_x25519(b.opk):
        raise SpecError("invalidKey")
    if b.kem_ek is not None and not ref_mlkem.ek_is_valid(b.kem_ek):
        raise SpecError("invalidKey")


def process_bundle(data: bytes) -> Bundle:
    b = decode_bundle(data)
    check_bundle(b)
    return b


# ---------------------------------------------------------------- X3DH
def prekey_prefix(ik_a: bytes, ek_a: bytes, spk_id: int, opk_id: Optional[int], kem_id: Optional[int],
                  ct: Optional[bytes], registration_id: Optional[int] = None, *, extra_flags: int = 0) -> bytes:
    """P = IK_A || EK_A || u32(spk_id) || flags || [u32(opk_id)] || [u32(kem_id) || CT]
    || [u32(registration_id)] (the last part: flags bit 2, §9, the initiator's id). The id is not
    range-checked here and extra_flags (reserved bits 3-7, ORed into the flags byte, adding no
    part) exists: both only for forging test messages whose P is consistent with their SK."""
    assert extra_flags & 0x07 == 0
    flags = ((1 if opk_id is not None else 0) | (2 if kem_id is not None else 0)
             | (4 if registration_id is not None else 0) | extra_flags)
    p = ik_a + ek_a + u32(spk_id) + bytes([flags])
    if opk_id is not None:
        p += u32(opk_id)
    if kem_id is not None:
        assert ct is not None and len(ct) == ref_mlkem.CT_LEN
        p += u32(kem_id) + ct
    if registration_id is not None:
        p += u32(registration_id)
    return p


def _kdf(ikm_dh: bytes, ss: Optional[bytes], p: bytes) -> bytes:
    if ss is None:
        return hkdf(ZERO32, FF32 + ikm_dh, INFO_X3DH + sha256(p), 32)
    return hkdf(ZERO32, FF32 + ikm_dh + ss, INFO_PQXDH + sha256(p), 32)


def associated_data(ik_a: bytes, ik_b: bytes, addr_a: bytes, addr_b: bytes) -> bytes:
    return ik_a + ik_b + addr_a + addr_b


def x3dh_initiator(alice_seed: bytes, addr_a: bytes, ek_sk: bytes, b: Bundle, addr_b: bytes,
                   encapsulation: Optional[tuple[bytes, bytes]], *, check: bool = True,
                   registration_id: Optional[int] = None, extra_flags: int = 0) -> tuple[bytes, bytes, bytes]:
    """-> (SK, AD, P). encapsulation = (CT, SS), the result of Encaps(PQPK_B) (fixed by a
    vector, SPEC §8); required exactly when the bundle has a KEM prekey. check=False skips
    the bundle checks (only for forging test messages). registration_id is Alice's own (§9),
    carried in P; the bundle's (Bob's) registration id takes no part in the computation.
    extra_flags: see prekey_prefix (forgeries only)."""
    if check:
        check_bundle(b)
    assert (encapsulation is not None) == (b.kem_ek is not None)
    ik_a = ed25519_pub(alice_seed)
    ek_a = x25519_pub(ek_sk)
    dh1 = dh(ed_seed_to_x_private(alice_seed), b.spk)
    dh2 = dh(ek_sk, ed_to_x_public(b.ik))
    dh3 = dh(ek_sk, b.spk)
    ikm = dh1 + dh2 + dh3
    if b.opk is not None:
        ikm += dh(ek_sk, b.opk)
    ct, ss = encapsulation if encapsulation is not None else (None, None)
    p = prekey_prefix(ik_a, ek_a, b.spk_id, b.opk_id if b.opk is not None else None,
                      b.kem_id if b.kem_ek is not None else None, ct, registration_id, extra_flags=extra_flags)
    return _kdf(ikm, ss, p), associated_data(ik_a, b.ik, addr_a, addr_b), p


def x3dh_responder(bob_seed: bytes, addr_b: bytes, spk_sk: bytes, opk_sk: Optional[bytes],
                   kem_seed: Optional[bytes], addr_a: bytes, p: bytes) -> tuple[bytes, bytes]:
    """-> (SK, AD) from Bob's private keys and the prefix P he received (parsed here; the
    caller has done the lookups). IK_A's point validity is checked by its conversion (invalidKey)."""
    ik_a, ek_a, flags = p[0:32], p[32:64], p[68]
    assert len(p) == (PREFIX_BASE_LEN + (4 if flags & 1 else 0) + (PREFIX_KEM_LEN if flags & 2 else 0)
                      + (PREFIX_RID_LEN if flags & 4 else 0))
    off = PREFIX_BASE_LEN + (4 if flags & 1 else 0)
    assert (opk_sk is not None) == bool(flags & 1) and (kem_seed is not None) == bool(flags & 2)
    ik_a_x = ed_to_x_public(ik_a)
    dh1 = dh(spk_sk, ik_a_x)
    dh2 = dh(ed_seed_to_x_private(bob_seed), ek_a)
    dh3 = dh(spk_sk, ek_a)
    ikm = dh1 + dh2 + dh3
    if opk_sk is not None:
        ikm += dh(opk_sk, ek_a)
    ss = None
    if kem_seed is not None:
        ct = p[off + 4:off + 4 + ref_mlkem.CT_LEN]
        assert len(ct) == ref_mlkem.CT_LEN
        ss = ref_mlkem.lib_decaps(kem_seed, ct)
    return _kdf(ikm, ss, p), associated_data(ik_a, ed25519_pub(bob_seed), addr_a, addr_b)


def encapsulate(b: Bundle, m: bytes) -> tuple[bytes, bytes]:
    """A fixed encapsulation (CT, SS) to the bundle's KEM prekey from the 32-byte m
    (FIPS 203 ML-KEM.Encaps_internal), checked against cryptography's decapsulation by the caller."""
    ss, ct = ref_mlkem.encaps(b.kem_ek, m)
    return ct, ss
