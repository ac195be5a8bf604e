"""Independent reference of SPEC.md version 2, §3 (X3DH with optional KEM prekey, as used by a
session) and §4 (Double Ratchet, prekey messages, sessions per address).

Built only on spec_primitives / ref_x3dh / ref_mlkem (PyPI `cryptography` + plain Python); it
shares no code with the Swift library. Used by generate_sessions.py to produce and self-check
the `ratchet` suite.

Model (SPEC §8, `ratchet` suite):
* Every party has an address (encoded with spec_primitives.encode_address) and keeps, per peer
  address, a list of sessions: index 0 is the current one, then up to 40 previous ones, most
  recently current first (§3 "Sessions per address").
* Alice is the initiator. Her session exists from the start (she has processed Bob's bundle with
  the fixed KEM encapsulation). She holds no prekeys, so a prekey message delivered to her is
  `unknownPreKey`. A session sends prekey messages (0x22 || P || message) until it has
  decrypted one message.
* Bob is the responder: one signed prekey (spk_id, with its signed `kem` bit), optionally one
  one-time prekey and one one-time KEM prekey, both deleted when the session they created is
  stored. He records EK_A under spk_id for every X3DH he completes.
* Each party takes its next `ratchet_keys` entry whenever §4 says "a new X25519 key".
* Decryption is transactional: all work is done on a deep copy of the party and committed only
  on success (a failed message changes nothing, draws no key, consumes no prekey, records no
  EK_A).

Readings of SPEC v2 (also in README.md, "Readings of SPEC v2"):
R1. Empty input has no type byte: `invalidMessage`.
R2. The prekey message's inner type byte is checked after the prefix length, the flags and the
    minimum inner length (57), and before key canonicity: other than 0x21 it is
    `unsupportedVersion`.
R3. Key canonicity covers EK_A and header.dh; IK_A's point validity is checked when X3DH
    converts it, after the lookups (`invalidKey`).
R4. A prekey message whose EK_A matches a session of that address (current or previous) is
    decided by that session alone: prefix mismatch -> `invalidMessage`; otherwise that
    session's ratchet decryption result (success makes it current).
R5. "A session that knows the message's ratchet key": header.dh equals its DHr, or equals the
    ratchet key of any skipped key it stores. Such a session decides (first one in the order
    current, previous most recent first). Otherwise every session is tried in that order and
    the error is the current session's.
R6. header.dh = DHr with no receiving chain is `invalidMessage`, decided before skip().
R7. The new sending key pair of a DH step is drawn after the message authenticated and
    unpadded; since skip()/KDF_CK never touch RK this gives the Double Ratchet's bytes.
R8. MAX_STORED eviction is per session across all chains, oldest inserted first.
R9. chainExhausted: encrypting refuses when Ns or PN would not fit in u32 (never reached).
R10. Content types (§2): a message is padded with a content type (1 application, 2 a sender-key
    distribution) and the receiver unpads expecting one; another type is `invalidPadding`, an
    authentication that does not unpad, so the session that opened it decides (R5) and nothing
    changes (transactional).
R11. Registration ids (§9): flag bit 2 adds u32(registration_id) at the end of P (prefix length
    70 + 4·bit0 + 1092·bit1 + 4·bit2); flag bits 3-7 and an id outside 1 ... 2^31 - 1 are
    `invalidMessage`, with the lengths and flags, before the inner minimum length and type byte
    (all `invalidMessage` among themselves, so their mutual order is not observable). The id is
    part of P (bound into SK) and of the prefix match (R4). A responder session records the
    peer's id from the prefix, an initiator session from the bundle (§9; no vector observes it).

The `lenient` set switches single checks off (`registration-id-range`, `reserved-flags`,
`registration-id-match`); it exists only so that the generator can show that a vector's
message would be accepted without the rule it tests. Real parties never set it.
"""
from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Optional

import ref_mlkem
import ref_x3dh as rx
from spec_primitives import (ZERO32, SpecError, aead_open, aead_seal, dh, ed25519_pub, hkdf,
                             is_canonical_x25519, kdf_ck, pad, read_u32, u32, unpad, x25519_pub)

INFO_RATCHET = b"SessionKit Ratchet v2"
INFO_MSGKEYS = b"SessionKit MessageKeys v2"

TYPE_MESSAGE = 0x21
TYPE_PREKEY = 0x22
HEADER_LEN = 41
TAG_LEN = 16
MIN_MESSAGE = HEADER_LEN + TAG_LEN          # 57
PREFIX_BASE = 1 + rx.PREFIX_BASE_LEN        # 70: 0x22 || IK_A || EK_A || u32(spk_id) || flags
MAX_U32 = 0xFFFFFFFF
DEFAULT_MAX_SKIP = 256
DEFAULT_MAX_STORED = 2000
MAX_PREVIOUS = 40


def prefix_len(flags: int) -> int:
    """The prekey prefix with its type byte: 70 + 4·bit0 + 1092·bit1 + 4·bit2 (§4, §9)."""
    return (PREFIX_BASE + (4 if flags & 1 else 0) + (rx.PREFIX_KEM_LEN if flags & 2 else 0)
            + (rx.PREFIX_RID_LEN if flags & 4 else 0))


# ---------------------------------------------------------------- KDFs (§4)
def kdf_rk(rk: bytes, dh_out: bytes) -> tuple[bytes, bytes]:
    out = hkdf(rk, dh_out, INFO_RATCHET, 64)
    return out[:32], out[32:]


def message_keys(mk: bytes) -> tuple[bytes, bytes]:
    out = hkdf(ZERO32, mk, INFO_MSGKEYS, 44)
    return out[:32], out[32:]


# ---------------------------------------------------------------- session state
@dataclass
class Origin:
    """What created a responder session (the prefix match of §4)."""
    ik_a: bytes
    ek_a: bytes
    spk_id: int
    opk_id: Optional[int]
    kem_id: Optional[int]
    ct: Optional[bytes]
    registration_id: Optional[int] = None      # §9: flags bit 2 of the prefix


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
    prefix: Optional[bytes] = None        # initiator: 0x22 || P until a message decrypts
    origin: Optional[Origin] = None       # responder: what created it
    peer_registration_id: Optional[int] = None   # §9: from the bundle (initiator) or the prefix (responder)

    def knows(self, dh_pub: bytes) -> bool:
        return (self.dhr is not None and self.dhr == dh_pub) or any(k[0] == dh_pub for k in self.skipped)


def ratchet_encrypt(s: Session, padded: bytes, *, pn: Optional[int] = None, n: Optional[int] = None) -> bytes:
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


@dataclass
class SignedPreKey:
    spk_id: int
    sk: bytes
    kem: int          # the signed kem bit


class Party:
    def __init__(self, name: str, identity_seed: bytes, address: bytes, ratchet_keys,
                 max_skip: int = DEFAULT_MAX_SKIP, max_stored: int = DEFAULT_MAX_STORED):
        if not (0 <= max_skip <= max_stored):
            raise ValueError("MAX_SKIP <= MAX_STORED is required")
        self.name = name
        self.identity_seed = identity_seed
        self.ik_pk = ed25519_pub(identity_seed)
        self.address = address
        self.ratchet_keys = tuple(ratchet_keys)
        self.keys_used = 0
        self.max_skip = max_skip
        self.max_stored = max_stored
        self.sessions: dict[bytes, list[Session]] = {}
        self.spk: Optional[SignedPreKey] = None
        self.opks: dict[int, bytes] = {}
        self.kems: dict[int, bytes] = {}                 # one-time KEM prekeys: kem_id -> seed
        self.ek_records: dict[int, set] = {}             # spk_id -> {EK_A}
        self.trace: list = []                            # (how a message was decided), for generator checks
        self.lenient: frozenset = frozenset()            # checks switched off (generator's sharpness checks only)

    # ------------------------------------------------ construction
    @classmethod
    def initiator(cls, identity_seed: bytes, address: bytes, ek_sk: bytes, ratchet_keys, *, bundle: rx.Bundle,
                  peer: bytes, encapsulation: Optional[tuple[bytes, bytes]], check: bool = True,
                  max_skip: int = DEFAULT_MAX_SKIP, max_stored: int = DEFAULT_MAX_STORED,
                  name: str = "alice", registration_id: Optional[int] = None, extra_flags: int = 0) -> "Party":
        p = cls(name, identity_seed, address, ratchet_keys, max_skip, max_stored)
        p.start_session(ek_sk, bundle, peer, encapsulation, check=check, registration_id=registration_id,
                        extra_flags=extra_flags)
        return p

    def start_session(self, ek_sk: bytes, bundle: rx.Bundle, peer: bytes,
                      encapsulation: Optional[tuple[bytes, bytes]], *, check: bool = True,
                      registration_id: Optional[int] = None, extra_flags: int = 0) -> None:
        """X3DH as initiator (§3) and the ratchet's initialisation (§4): the new session becomes
        current for `peer`. registration_id: this party's own id, sent in P (§9, flags bit 2);
        not range-checked, and extra_flags (reserved bits), only for forging test messages."""
        sk, ad, p = rx.x3dh_initiator(self.identity_seed, self.address, ek_sk, bundle, peer, encapsulation,
                                      check=check, registration_id=registration_id, extra_flags=extra_flags)
        dhs_sk = self._new_key()
        rk, cks = kdf_rk(sk, dh(dhs_sk, bundle.spk))
        s = Session(ad=ad, rk=rk, dhs_sk=dhs_sk, dhs_pk=x25519_pub(dhs_sk), dhr=bundle.spk, cks=cks, ckr=None,
                    prefix=bytes([TYPE_PREKEY]) + p, peer_registration_id=bundle.registration_id)
        self._insert(peer, s)

    @classmethod
    def responder(cls, identity_seed: bytes, address: bytes, ratchet_keys, *, spk_id: int, spk_sk: bytes,
                  kem_bit: int, opks: Optional[dict] = None, kems: Optional[dict] = None,
                  max_skip: int = DEFAULT_MAX_SKIP, max_stored: int = DEFAULT_MAX_STORED,
                  name: str = "bob") -> "Party":
        p = cls(name, identity_seed, address, ratchet_keys, max_skip, max_stored)
        p.spk = SignedPreKey(spk_id, spk_sk, kem_bit)
        p.opks = dict(opks or {})
        p.kems = dict(kems or {})
        return p

    def _new_key(self) -> bytes:
        if self.keys_used >= len(self.ratchet_keys):
            raise RuntimeError(f"{self.name} ran out of ratchet_keys")
        k = self.ratchet_keys[self.keys_used]
        self.keys_used += 1
        return k

    def _insert(self, peer: bytes, s: Session) -> None:
        lst = self.sessions.setdefault(peer, [])
        lst.insert(0, s)
        del lst[1 + MAX_PREVIOUS:]

    def state(self):
        """A comparable snapshot of everything decryption may change."""
        return copy.deepcopy((self.keys_used, self.sessions, self.spk, self.opks, self.kems, self.ek_records))

    def current(self, peer: bytes) -> Session:
        return self.sessions[peer][0]

    # ------------------------------------------------ encrypt
    def encrypt(self, peer: bytes, plaintext: bytes, content_type: int = 1) -> bytes:
        lst = self.sessions.get(peer)
        if not lst or lst[0].cks is None:
            raise SpecError("noSession")
        s = copy.deepcopy(lst[0])
        body = ratchet_encrypt(s, pad(plaintext, content_type))
        lst[0] = s
        return (s.prefix or b"") + body

    def forge(self, peer: bytes, *, plaintext: bytes = b"", padded: Optional[bytes] = None,
              pn: Optional[int] = None, n: Optional[int] = None, prefix: Optional[bytes] = None) -> bytes:
        """A message this party could send next on its current session to `peer` (optionally with
        overridden header counters, raw padded bytes or another prefix), computed on a copy:
        the party's state is NOT changed."""
        s = copy.deepcopy(self.sessions[peer][0])
        body = ratchet_encrypt(s, pad(plaintext) if padded is None else padded, pn=pn, n=n)
        return ((s.prefix or b"") if prefix is None else prefix) + body

    # ------------------------------------------------ decrypt (transactional)
    def decrypt(self, peer: bytes, message: bytes, content_type: int = 1) -> bytes:
        trial = copy.deepcopy(self)
        trial.trace = []
        pt = trial._decrypt(peer, message, content_type)
        self.__dict__ = trial.__dict__   # commit only on success
        return pt

    def decide(self, peer: bytes, message: bytes, content_type: int = 1):
        """(outcome, trace) without changing this party: outcome is ('ok', plaintext) or
        (error name, None); trace says which session decided (for the generator's checks)."""
        trial = copy.deepcopy(self)
        trial.trace = []
        try:
            return ("ok", trial._decrypt(peer, message, content_type)), trial.trace
        except SpecError as e:
            return (e.name, None), trial.trace

    def _decrypt(self, peer: bytes, m: bytes, ct_expected: int = 1) -> bytes:
        if len(m) == 0:
            raise SpecError("invalidMessage")                       # R1
        t = m[0]
        if t == TYPE_MESSAGE:
            if len(m) < MIN_MESSAGE:
                raise SpecError("invalidMessage")
            header, body = m[:HEADER_LEN], m[HEADER_LEN:]
            if not is_canonical_x25519(header[1:33]):
                raise SpecError("invalidKey")
            return self._decrypt_message(peer, header, body, ct_expected)
        if t != TYPE_PREKEY:
            raise SpecError("unsupportedVersion")
        # ---- prekey message: lengths and flags
        if len(m) < PREFIX_BASE:
            raise SpecError("invalidMessage")
        ik_a, ek_a, spk_id, flags = m[1:33], m[33:65], read_u32(m, 65), m[69]
        if flags & ~0x07 and "reserved-flags" not in self.lenient:
            raise SpecError("invalidMessage")                       # R11: bits 3-7 reserved
        plen = prefix_len(flags)
        if len(m) < plen + MIN_MESSAGE:
            raise SpecError("invalidMessage")
        off = PREFIX_BASE
        opk_id = kem_id = ct = rid = None
        if flags & 1:
            opk_id = read_u32(m, off)
            off += 4
        if flags & 2:
            kem_id = read_u32(m, off)
            ct = m[off + 4:off + 4 + ref_mlkem.CT_LEN]
            off += rx.PREFIX_KEM_LEN
        if flags & 4:
            rid = read_u32(m, off)
            off += rx.PREFIX_RID_LEN
            if not rx.registration_id_is_valid(rid) and "registration-id-range" not in self.lenient:
                raise SpecError("invalidMessage")                   # R11: with the lengths and flags
        assert off == plen
        inner = m[plen:]
        if inner[0] != TYPE_MESSAGE:
            raise SpecError("unsupportedVersion")                   # R2
        header, body = inner[:HEADER_LEN], inner[HEADER_LEN:]
        # ---- key canonicity (R3)
        if not is_canonical_x25519(ek_a) or not is_canonical_x25519(header[1:33]):
            raise SpecError("invalidKey")
        # ---- lookups in §3's order: same-EK_A session, spk_id, EK_A record, opk_id, kem_id, stripped KEM
        lst = self.sessions.get(peer, [])
        for i, s in enumerate(lst):
            if s.origin is not None and s.origin.ek_a == ek_a:
                o = s.origin
                o_rid, m_rid = o.registration_id, rid
                if "registration-id-match" in self.lenient:
                    o_rid = m_rid = None
                if (o.ik_a, o.spk_id, o.opk_id, o.kem_id, o.ct, o_rid) != (ik_a, spk_id, opk_id, kem_id, ct, m_rid):
                    self.trace.append(("prefix-mismatch", i))
                    raise SpecError("invalidMessage")
                self.trace.append(("ek-session", i))
                pt = self._ratchet_decrypt(s, header, body, ct_expected)   # R4: errors are this session's
                lst.insert(0, lst.pop(i))
                return pt
        if self.spk is None or self.spk.spk_id != spk_id:
            self.trace.append(("lookup", "spk_id"))
            raise SpecError("unknownPreKey")
        if ek_a in self.ek_records.get(spk_id, set()):
            self.trace.append(("lookup", "ek-record"))
            raise SpecError("duplicateMessage")
        if opk_id is not None and opk_id not in self.opks:
            self.trace.append(("lookup", "opk_id"))
            raise SpecError("unknownPreKey")
        if kem_id is not None and kem_id not in self.kems:
            self.trace.append(("lookup", "kem_id"))
            raise SpecError("unknownPreKey")
        if kem_id is None and self.spk.kem == 1:
            self.trace.append(("lookup", "stripped-kem"))
            raise SpecError("invalidMessage")
        # ---- X3DH as responder
        self.trace.append(("x3dh", None))
        p = m[1:plen]
        opk_sk = self.opks.pop(opk_id) if opk_id is not None else None
        kem_seed = self.kems.pop(kem_id) if kem_id is not None else None
        sk, ad = rx.x3dh_responder(self.identity_seed, self.address, self.spk.sk, opk_sk, kem_seed, peer, p)
        s = Session(ad=ad, rk=sk, dhs_sk=self.spk.sk, dhs_pk=x25519_pub(self.spk.sk), dhr=None, cks=None, ckr=None,
                    origin=Origin(ik_a=ik_a, ek_a=ek_a, spk_id=spk_id, opk_id=opk_id, kem_id=kem_id, ct=ct,
                                  registration_id=rid),
                    peer_registration_id=rid)
        pt = self._ratchet_decrypt(s, header, body, ct_expected)
        self.ek_records.setdefault(spk_id, set()).add(ek_a)
        self._insert(peer, s)
        return pt

    def _decrypt_message(self, peer: bytes, header: bytes, body: bytes, ct_expected: int = 1) -> bytes:
        """A 0x21 message: current session, then the previous ones, most recent first (R5)."""
        lst = self.sessions.get(peer)
        if not lst:
            self.trace.append(("no-session", None))
            raise SpecError("noSession")
        dh_pub = header[1:33]
        first_error = None
        for i, s in enumerate(lst):
            knows = s.knows(dh_pub)
            trial = copy.deepcopy(s)
            keys_before = self.keys_used
            nr_before, dhr_before = s.nr, s.dhr
            try:
                pt = self._ratchet_decrypt(trial, header, body, ct_expected)
            except SpecError as e:
                self.keys_used = keys_before
                if knows:
                    self.trace.append(("decided", i, e.name))
                    raise
                if i == 0:
                    first_error = e
                continue
            self.trace.append(("decrypted", i, knows, read_u32(header, 33) == nr_before and dhr_before != dh_pub))
            lst[i] = trial
            lst.insert(0, lst.pop(i))
            return pt
        self.trace.append(("current-error", first_error.name))
        raise first_error

    # ------------------------------------------------ §4 Decrypt in one session
    def _skip(self, s: Session, until: int) -> None:
        if s.nr + self.max_skip < until:
            raise SpecError("tooManySkippedMessages")
        if s.ckr is None:
            return
        while s.nr < until:
            mk, s.ckr = kdf_ck(s.ckr)
            s.skipped[(s.dhr, s.nr)] = mk
            while len(s.skipped) > self.max_stored:                 # R8: oldest first
                s.skipped.popitem(last=False)
            s.nr += 1

    @staticmethod
    def _open(s: Session, mk: bytes, header: bytes, body: bytes, ct_expected: int = 1) -> bytes:
        key, nonce = message_keys(mk)
        return unpad(aead_open(key, nonce, body, s.ad + header), ct_expected)   # R10

    def _ratchet_decrypt(self, s: Session, header: bytes, body: bytes, ct_expected: int = 1) -> bytes:
        """Works on s in place; callers pass a copy or discard s on error."""
        dh_pub, pn, n = header[1:33], read_u32(header, 33), read_u32(header, 37)
        # 1. stored skipped key
        if (dh_pub, n) in s.skipped:
            mk = s.skipped.pop((dh_pub, n))
            pt = self._open(s, mk, header, body, ct_expected)
            s.prefix = None
            return pt
        # current chain
        if s.dhr is not None and dh_pub == s.dhr:
            if s.ckr is None:
                raise SpecError("invalidMessage")                   # R6
            if n < s.nr:
                raise SpecError("duplicateMessage")
            self._skip(s, n)
            mk, s.ckr = kdf_ck(s.ckr)
            s.nr += 1
            pt = self._open(s, mk, header, body, ct_expected)
            s.prefix = None
            return pt
        # 2. DH ratchet step
        self._skip(s, pn)
        s.pn, s.ns, s.nr, s.dhr = s.ns, 0, 0, dh_pub
        s.rk, s.ckr = kdf_rk(s.rk, dh(s.dhs_sk, s.dhr))
        s.cks = None
        # 3.
        self._skip(s, n)
        mk, s.ckr = kdf_ck(s.ckr)
        s.nr += 1
        pt = self._open(s, mk, header, body, ct_expected)
        # authenticated and unpadded: only now draw the new sending key (R7)
        s.dhs_sk = self._new_key()
        s.dhs_pk = x25519_pub(s.dhs_sk)
        s.rk, s.cks = kdf_rk(s.rk, dh(s.dhs_sk, s.dhr))
        s.prefix = None
        return pt
