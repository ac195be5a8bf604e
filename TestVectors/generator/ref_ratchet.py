"""Independent reference of SPEC.md §3 (X3DH) and §4 (Double Ratchet, prekey messages).

Built only on spec_primitives (PyPI `cryptography` + plain Python); it shares no code
with the Swift library. Used by generate_sessions.py to produce and self-check
TestVectors/protocol/ratchet.json.

Model (SPEC §8, `ratchet` suite):
* Alice is the initiator. Her session exists from the start (she has processed Bob's
  bundle and verified its signature). She holds no prekeys, so any prekey message
  delivered to her is `unknownPreKey`. She sends prekey messages (0x02 prefix) until she
  has successfully decrypted one message from Bob.
* Bob is the responder. He holds one signed prekey (spk_id) and optionally one one-time
  prekey (opk_id), deleted after its first successful use. He has no session until the
  first prekey message decrypts.
* Each party takes its next `ratchet_keys` entry whenever §4 says "a new X25519 key"
  (Alice's first one at initialisation).
* Decryption is transactional: the work is done on a deep copy of the whole party
  (session, skipped keys, one-time prekeys, ratchet-key cursor, prekey-mode flag) and
  committed only on success.

Resolutions of points SPEC.md leaves open (each also reported to the team; the vector
generator avoids tests whose expected error depends on them):
R1. Bob keeps ONE session slot. A prekey message whose EK_A differs from the EK_A that
    created the current session runs X3DH and, on success, replaces the session
    (Signal archives the old one; no vector exercises replacement).
R2. For a prekey message, the "session created from the same EK_A" lookup happens before
    any spk/opk lookup; when it matches, IK_A, spk_id and the OPK part (flag and opk_id)
    are compared byte for byte (mismatch: invalidMessage) and no prekey is looked up.
    (This is forced by SPEC: Alice's later prekey messages name an OPK that was already
    deleted and must still decrypt.)
R3. IK_A's point validity (§1 ed->x) is checked inside X3DH (invalidKey), not in the
    "key canonicity" stage; key canonicity covers the X25519 keys EK_A and header.dh.
R4. The inner message of a prekey message must start with 0x01; another byte there is
    `unsupportedVersion` (checked after the prefix lengths/flag). Not in the vectors.
R5. An empty input has no type byte: `invalidMessage`.
R6. The new sending key pair of a DH step is drawn after the message authenticated and
    unpadded (SPEC: "drawn only once the message has authenticated"); the sending-chain
    KDF_RK is done then. This gives the same bytes as the Double Ratchet spec's order
    because skip()/KDF_CK never touch RK.
R7. When header.dh == DHr and there is no receiving chain the message is invalidMessage
    before skip(header.n) is evaluated (so a huge n there is invalidMessage, not
    tooManySkippedMessages). Not in the vectors.
R8. Eviction: after each stored key, while more than MAX_STORED keys are stored, the
    oldest (first inserted) is dropped. Skipped keys of a message that then fails are
    never stored (transactional).
R9. chainExhausted: encrypt refuses when Ns or PN does not fit in u32; Sender Keys the same
    for the iteration. Receiving never needs a counter above 2^32 - 1 in a header.
"""
from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Optional

from spec_primitives import (FF32, ZERO32, SpecError, aead_open, aead_seal, dh, ed25519_pub,
                             ed25519_sign, ed25519_verify, ed_seed_to_x_private, ed_to_x_public,
                             encode_x25519, hkdf, is_canonical_x25519, kdf_ck, pad, read_u32, u32,
                             unpad, x25519_pub)

INFO_X3DH = b"SessionKit X3DH v1"
INFO_RATCHET = b"SessionKit Ratchet v1"
INFO_MSGKEYS = b"SessionKit MessageKeys v1"

TYPE_MESSAGE = 0x01
TYPE_PREKEY = 0x02
HEADER_LEN = 41
TAG_LEN = 16
MIN_MESSAGE = HEADER_LEN + TAG_LEN          # 57
PREFIX_NO_OPK = 70                          # 0x02 || IK_A || EK_A || u32(spk_id) || flag
PREFIX_OPK = 74                             # ... || u32(opk_id)
MAX_U32 = 0xFFFFFFFF
DEFAULT_MAX_SKIP = 256
DEFAULT_MAX_STORED = 2000


# ---------------------------------------------------------------- KDFs (§4)
def kdf_rk(rk: bytes, dh_out: bytes) -> tuple[bytes, bytes]:
    out = hkdf(rk, dh_out, INFO_RATCHET, 64)
    return out[:32], out[32:]


def message_keys(mk: bytes) -> tuple[bytes, bytes]:
    out = hkdf(ZERO32, mk, INFO_MSGKEYS, 44)
    return out[:32], out[32:]


# ---------------------------------------------------------------- X3DH (§3)
def spk_signature(bob_identity_seed: bytes, spk_pub: bytes) -> bytes:
    return ed25519_sign(bob_identity_seed, encode_x25519(spk_pub))


def x3dh_initiator(alice_seed: bytes, ek_sk: bytes, ik_b: bytes, spk_pub: bytes, spk_sig: bytes,
                   opk_pub: Optional[bytes]) -> tuple[bytes, bytes]:
    """-> (SK, AD). The signature is checked before any conversion or DH."""
    if not ed25519_verify(ik_b, spk_sig, encode_x25519(spk_pub)):
        raise SpecError("invalidSignature")
    ik_a = ed25519_pub(alice_seed)
    dh1 = dh(ed_seed_to_x_private(alice_seed), spk_pub)
    dh2 = dh(ek_sk, ed_to_x_public(ik_b))
    dh3 = dh(ek_sk, spk_pub)
    ikm = FF32 + dh1 + dh2 + dh3
    if opk_pub is not None:
        ikm += dh(ek_sk, opk_pub)
    return hkdf(ZERO32, ikm, INFO_X3DH, 32), ik_a + ik_b


def x3dh_responder(bob_seed: bytes, spk_sk: bytes, opk_sk: Optional[bytes], ik_a: bytes,
                   ek_a: bytes) -> tuple[bytes, bytes]:
    """-> (SK, AD). IK_A must be a valid Ed25519 point (ed->x, else invalidKey)."""
    ik_a_x = ed_to_x_public(ik_a)
    dh1 = dh(spk_sk, ik_a_x)
    dh2 = dh(ed_seed_to_x_private(bob_seed), ek_a)
    dh3 = dh(spk_sk, ek_a)
    ikm = FF32 + dh1 + dh2 + dh3
    if opk_sk is not None:
        ikm += dh(opk_sk, ek_a)
    return hkdf(ZERO32, ikm, INFO_X3DH, 32), ik_a + ed25519_pub(bob_seed)


def prekey_prefix(ik_a: bytes, ek_a: bytes, spk_id: int, opk_id: Optional[int]) -> bytes:
    p = bytes([TYPE_PREKEY]) + ik_a + ek_a + u32(spk_id)
    return p + (b"\x00" if opk_id is None else b"\x01" + u32(opk_id))


# ---------------------------------------------------------------- session state
@dataclass
class Session:
    ad: bytes
    rk: bytes
    dhs_sk: bytes
    dhs_pk: bytes
    dhr: Optional[bytes]
    cks: Optional[bytes]
    ckr: Optional[bytes]
    ns: int = 0
    nr: int = 0
    pn: int = 0
    skipped: "OrderedDict[tuple[bytes, int], bytes]" = field(default_factory=OrderedDict)


@dataclass
class Origin:
    """What created a responder session (for the prefix match of §4)."""
    ik_a: bytes
    ek_a: bytes
    spk_id: int
    opk_id: Optional[int]


def ratchet_encrypt(s: Session, padded: bytes, *, pn: Optional[int] = None,
                    n: Optional[int] = None) -> bytes:
    """§4 Encrypt of already padded bytes. pn / n overrides exist only for forging test
    messages (n >= Ns advances the sending chain to n first); real sends never use them."""
    if n is not None:
        if n < s.ns:
            raise ValueError("cannot forge a counter below Ns")
        while s.ns < n:
            _, s.cks = kdf_ck(s.cks)
            s.ns += 1
    if s.ns > MAX_U32 or s.pn > MAX_U32:
        raise SpecError("chainExhausted")
    mk, s.cks = kdf_ck(s.cks)
    header = bytes([TYPE_MESSAGE]) + s.dhs_pk + u32(s.pn if pn is None else pn) + u32(s.ns)
    s.ns += 1
    key, nonce = message_keys(mk)
    return header + aead_seal(key, nonce, padded, s.ad + header)


class Party:
    def __init__(self, name: str, identity_seed: bytes, ratchet_keys, max_skip: int = DEFAULT_MAX_SKIP,
                 max_stored: int = DEFAULT_MAX_STORED):
        if not (0 <= max_skip <= max_stored):
            raise ValueError("MAX_SKIP <= MAX_STORED is required")
        self.name = name
        self.identity_seed = identity_seed
        self.ik_pk = ed25519_pub(identity_seed)
        self.ratchet_keys = tuple(ratchet_keys)
        self.keys_used = 0
        self.max_skip = max_skip
        self.max_stored = max_stored
        self.session: Optional[Session] = None
        self.prefix: Optional[bytes] = None          # initiator: prekey prefix until first reply
        self.origin: Optional[Origin] = None         # responder: what created the session
        self.spk: Optional[tuple[int, bytes]] = None  # (spk_id, spk_sk)
        self.opks: dict[int, bytes] = {}             # opk_id -> opk_sk (deleted on first use)

    # ------------------------------------------------ construction
    @classmethod
    def initiator(cls, identity_seed: bytes, ek_sk: bytes, ratchet_keys, *, ik_b: bytes, spk_pub: bytes,
                  spk_id: int, spk_sig: bytes, opk_pub: Optional[bytes], opk_id: Optional[int],
                  max_skip: int = DEFAULT_MAX_SKIP, max_stored: int = DEFAULT_MAX_STORED) -> "Party":
        p = cls("alice", identity_seed, ratchet_keys, max_skip, max_stored)
        sk, ad = x3dh_initiator(identity_seed, ek_sk, ik_b, spk_pub, spk_sig, opk_pub)
        dhs_sk = p._new_key()
        rk, cks = kdf_rk(sk, dh(dhs_sk, spk_pub))
        p.session = Session(ad=ad, rk=rk, dhs_sk=dhs_sk, dhs_pk=x25519_pub(dhs_sk), dhr=spk_pub,
                            cks=cks, ckr=None)
        p.prefix = prekey_prefix(p.ik_pk, x25519_pub(ek_sk), spk_id, opk_id if opk_pub is not None else None)
        return p

    @classmethod
    def responder(cls, identity_seed: bytes, spk_sk: bytes, spk_id: int, opk_sk: Optional[bytes],
                  opk_id: Optional[int], ratchet_keys, *, max_skip: int = DEFAULT_MAX_SKIP,
                  max_stored: int = DEFAULT_MAX_STORED) -> "Party":
        p = cls("bob", identity_seed, ratchet_keys, max_skip, max_stored)
        p.spk = (spk_id, spk_sk)
        if opk_sk is not None:
            p.opks[opk_id] = opk_sk
        return p

    def _new_key(self) -> bytes:
        if self.keys_used >= len(self.ratchet_keys):
            raise RuntimeError(f"{self.name} ran out of ratchet_keys")
        k = self.ratchet_keys[self.keys_used]
        self.keys_used += 1
        return k

    def state(self):
        """A comparable snapshot of everything decryption may change."""
        return copy.deepcopy((self.keys_used, self.session, self.prefix, self.origin, self.spk,
                              dict(self.opks)))

    # ------------------------------------------------ encrypt
    def encrypt(self, plaintext: bytes) -> bytes:
        if self.session is None or self.session.cks is None:
            raise SpecError("noSession")
        s = copy.deepcopy(self.session)
        body = ratchet_encrypt(s, pad(plaintext))
        self.session = s
        return (self.prefix or b"") + body

    def forge(self, *, plaintext: bytes = b"", padded: Optional[bytes] = None, pn: Optional[int] = None,
              n: Optional[int] = None, prefix: Optional[bytes] = None) -> bytes:
        """A message this party could send next (optionally with overridden header counters or
        raw padded bytes), computed on a copy: the party's state is NOT changed."""
        s = copy.deepcopy(self.session)
        body = ratchet_encrypt(s, pad(plaintext) if padded is None else padded, pn=pn, n=n)
        return ((self.prefix or b"") if prefix is None else prefix) + body

    # ------------------------------------------------ decrypt (transactional)
    def decrypt(self, message: bytes) -> bytes:
        trial = copy.deepcopy(self)
        pt = trial._decrypt(message)
        self.__dict__ = trial.__dict__   # commit only on success
        return pt

    def _decrypt(self, m: bytes) -> bytes:
        if len(m) == 0:
            raise SpecError("invalidMessage")                      # R5
        t = m[0]
        if t == TYPE_MESSAGE:
            if len(m) < MIN_MESSAGE:
                raise SpecError("invalidMessage")
            header, body = m[:HEADER_LEN], m[HEADER_LEN:]
            if not is_canonical_x25519(header[1:33]):
                raise SpecError("invalidKey")
            if self.session is None:
                raise SpecError("noSession")
            pt = self._ratchet_decrypt(self.session, header, body)
            self.prefix = None        # an initiator stops sending prekey messages after a reply
            return pt
        if t != TYPE_PREKEY:
            raise SpecError("unsupportedVersion")
        # ---- prekey message: lengths and flag
        if len(m) < PREFIX_NO_OPK:
            raise SpecError("invalidMessage")
        ik_a, ek_a, spk_id, flag = m[1:33], m[33:65], read_u32(m, 65), m[69]
        if flag not in (0, 1):
            raise SpecError("invalidMessage")
        plen = PREFIX_OPK if flag == 1 else PREFIX_NO_OPK
        if len(m) < plen + MIN_MESSAGE:
            raise SpecError("invalidMessage")
        opk_id = read_u32(m, 70) if flag == 1 else None
        inner = m[plen:]
        if inner[0] != TYPE_MESSAGE:
            raise SpecError("unsupportedVersion")                  # R4
        header, body = inner[:HEADER_LEN], inner[HEADER_LEN:]
        # ---- key canonicity
        if not is_canonical_x25519(ek_a) or not is_canonical_x25519(header[1:33]):
            raise SpecError("invalidKey")
        # ---- session or prekey lookup (R2: same-EK_A session first, then prekeys)
        if self.origin is not None and self.origin.ek_a == ek_a:
            if (self.origin.ik_a, self.origin.spk_id, self.origin.opk_id) != (ik_a, spk_id, opk_id):
                raise SpecError("invalidMessage")
            return self._ratchet_decrypt(self.session, header, body)
        if self.spk is None or self.spk[0] != spk_id:
            raise SpecError("unknownPreKey")
        if opk_id is not None and opk_id not in self.opks:
            raise SpecError("unknownPreKey")
        # ---- X3DH as responder; the new session replaces any previous one (R1)
        spk_sk = self.spk[1]
        opk_sk = self.opks.pop(opk_id) if opk_id is not None else None
        sk, ad = x3dh_responder(self.identity_seed, spk_sk, opk_sk, ik_a, ek_a)
        self.session = Session(ad=ad, rk=sk, dhs_sk=spk_sk, dhs_pk=x25519_pub(spk_sk), dhr=None,
                               cks=None, ckr=None)
        self.origin = Origin(ik_a=ik_a, ek_a=ek_a, spk_id=spk_id, opk_id=opk_id)
        return self._ratchet_decrypt(self.session, header, body)

    # ------------------------------------------------ §4 Decrypt
    def _skip(self, s: Session, until: int) -> None:
        if s.nr + self.max_skip < until:
            raise SpecError("tooManySkippedMessages")
        if s.ckr is None:
            return
        while s.nr < until:
            mk, s.ckr = kdf_ck(s.ckr)
            s.skipped[(s.dhr, s.nr)] = mk
            while len(s.skipped) > self.max_stored:          # R8: oldest first
                s.skipped.popitem(last=False)
            s.nr += 1

    @staticmethod
    def _open(s: Session, mk: bytes, header: bytes, body: bytes) -> bytes:
        key, nonce = message_keys(mk)
        return unpad(aead_open(key, nonce, body, s.ad + header))

    def _ratchet_decrypt(self, s: Session, header: bytes, body: bytes) -> bytes:
        dh_pub, pn, n = header[1:33], read_u32(header, 33), read_u32(header, 37)
        # 1. stored skipped key
        if (dh_pub, n) in s.skipped:
            mk = s.skipped.pop((dh_pub, n))
            return self._open(s, mk, header, body)
        # current chain
        if s.dhr is not None and dh_pub == s.dhr:
            if s.ckr is None:
                raise SpecError("invalidMessage")                 # R7
            if n < s.nr:
                raise SpecError("duplicateMessage")
            self._skip(s, n)
            mk, s.ckr = kdf_ck(s.ckr)
            s.nr += 1
            return self._open(s, mk, header, body)
        # 2. DH ratchet step
        self._skip(s, pn)
        s.pn, s.ns, s.nr, s.dhr = s.ns, 0, 0, dh_pub
        s.rk, s.ckr = kdf_rk(s.rk, dh(s.dhs_sk, s.dhr))
        s.cks = None
        # 3.
        self._skip(s, n)
        mk, s.ckr = kdf_ck(s.ckr)
        s.nr += 1
        pt = self._open(s, mk, header, body)
        # authenticated: only now draw the new sending key (R6)
        s.dhs_sk = self._new_key()
        s.dhs_pk = x25519_pub(s.dhs_sk)
        s.rk, s.cks = kdf_rk(s.rk, dh(s.dhs_sk, s.dhr))
        return pt
