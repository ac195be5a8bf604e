"""Independent reference of SPEC.md version 2, §5 (Sender Keys).

Built only on spec_primitives (PyPI `cryptography` + plain Python); it shares no code with the
Swift library. Used by generate_sessions.py for the `sender-key` suite.

A chain belongs to one group and one sender; the group id (bytes) and the sender's encoded
address are bound into the AAD and the signature, never sent with a message. A receiver keeps
its chains per (sender, group), keyed by chain_id.

Readings of SPEC v2 (also in README.md, "Readings of SPEC v2"):
S1. A distribution is exactly 1 + 1 + len(gid) + 32 + 4 + 32 + 32 bytes with 1 <= len(gid);
    anything else (empty included) is invalidMessage, after the type byte.
S2. "More than MAX_SKIP ahead" means iteration - current > 256; exactly 256 ahead stores 256
    skipped keys and decrypts (the same boundary as §4's Nr + MAX_SKIP < until).
S3. Eviction: after each stored key, while more than 2000 are stored for the chain, the oldest
    (first inserted, the lowest iteration) is dropped.
S4. The sender refuses to encrypt once the iteration no longer fits in u32 (chainExhausted).
S5. An empty message is invalidMessage (no type byte).
S6. At most 5 chains per (sender, group): storing a 6th drops the earliest-arrived one
    (libsignal's MAX_SENDER_KEY_STATES); no vector depends on it.
S7. A tampered iteration fails the signature first (the signature covers it).
"""
from __future__ import annotations

import copy
import hmac
from collections import OrderedDict
from dataclasses import dataclass, field

from spec_primitives import (SpecError, ZERO32, aead_open, aead_seal, ed25519_point_is_valid, ed25519_pub,
                             ed25519_sign, ed25519_verify, encode_group, hkdf, kdf_ck, pad, read_u32, sha256, u32,
                             unpad)

INFO_SENDER_KEY = b"SessionKit SenderKey v2"
TYPE_DISTRIBUTION = 0x23
TYPE_MESSAGE = 0x24
DISTRIBUTION_FIXED = 1 + 1 + 32 + 4 + 32 + 32        # 102 + len(gid)
HEAD_LEN = 1 + 32 + 4 + 32                           # type, chain_id, iteration, commit
MIN_MESSAGE = HEAD_LEN + 16 + 64                     # 149
SIG_LEN = 64
MAX_SKIP = 256
MAX_STORED = 2000
MAX_CHAINS = 5
MAX_U32 = 0xFFFFFFFF


def sender_message_keys(mk: bytes) -> tuple[bytes, bytes, bytes]:
    out = hkdf(ZERO32, mk, INFO_SENDER_KEY, 76)
    return out[:32], out[32:44], out[44:76]


def seal_message(group: bytes, sender: bytes, chain_id: bytes, iteration: int, mk: bytes, padded: bytes,
                 signing_seed: bytes, *, commit: bytes | None = None) -> bytes:
    """commit overrides the derived commitment (forgeries only)."""
    key, nonce, derived = sender_message_keys(mk)
    commit = derived if commit is None else commit
    head = bytes([TYPE_MESSAGE]) + chain_id + u32(iteration) + commit
    aad = bytes([TYPE_MESSAGE]) + encode_group(group) + sender + chain_id + u32(iteration) + commit
    signed = head + aead_seal(key, nonce, padded, aad)
    return signed + ed25519_sign(signing_seed, encode_group(group) + sender + signed)


def sign_message(group: bytes, sender: bytes, signed: bytes, signing_seed: bytes) -> bytes:
    return signed + ed25519_sign(signing_seed, encode_group(group) + sender + signed)


class SenderChain:
    """The sending side of one chain (group id as bytes, sender as its encoded address)."""

    def __init__(self, chain_key0: bytes, signing_seed: bytes, group: bytes, sender: bytes):
        self.chain_id = sha256(chain_key0)
        self.iteration = 0
        self.ck = chain_key0
        self.signing_seed = signing_seed
        self.signing_pk = ed25519_pub(signing_seed)
        self.group = group
        self.sender = sender

    def advance_to(self, iteration: int) -> None:
        while self.iteration < iteration:
            _, self.ck = kdf_ck(self.ck)
            self.iteration += 1

    def distribution(self, *, group: bytes | None = None) -> bytes:
        g = self.group if group is None else group
        return (bytes([TYPE_DISTRIBUTION]) + encode_group(g) + self.chain_id + u32(self.iteration) + self.ck
                + self.signing_pk)

    def encrypt(self, plaintext: bytes, *, padded: bytes | None = None, commit: bytes | None = None,
                group: bytes | None = None, sender: bytes | None = None) -> bytes:
        if self.iteration > MAX_U32:
            raise SpecError("chainExhausted")
        mk, ck = kdf_ck(self.ck)
        m = seal_message(self.group if group is None else group, self.sender if sender is None else sender,
                         self.chain_id, self.iteration, mk, pad(plaintext) if padded is None else padded,
                         self.signing_seed, commit=commit)
        self.ck = ck
        self.iteration += 1
        return m

    def forge(self, plaintext: bytes = b"", **kw) -> bytes:
        """What encrypt would return next (with the overrides of encrypt), without changing this chain."""
        return copy.deepcopy(self).encrypt(plaintext, **kw)


@dataclass
class ReceiverChain:
    start: int            # the iteration of the distribution this copy started from
    iteration: int
    ck: bytes
    signing_pk: bytes
    skipped: "OrderedDict[int, bytes]" = field(default_factory=OrderedDict)


class SenderKeyReceiver:
    def __init__(self):
        # (sender, Encode(group)) -> chain_id -> ReceiverChain, in arrival order
        self.chains: dict[tuple[bytes, bytes], OrderedDict] = {}

    def state(self):
        return copy.deepcopy(self.chains)

    def process_distribution(self, sender: bytes, group: bytes, d: bytes) -> str:
        """-> 'stored' or 'ignored'; raises SpecError."""
        if len(d) == 0:
            raise SpecError("invalidMessage")
        if d[0] != TYPE_DISTRIBUTION:
            raise SpecError("unsupportedVersion")
        if len(d) < 2 or d[1] == 0 or len(d) != DISTRIBUTION_FIXED + d[1]:
            raise SpecError("invalidMessage")                   # S1
        glen = d[1]
        gid = d[2:2 + glen]
        if gid != group:
            raise SpecError("invalidMessage")
        off = 2 + glen
        chain_id, iteration, ck, spk = d[off:off + 32], read_u32(d, off + 32), d[off + 36:off + 68], d[off + 68:]
        if not ed25519_point_is_valid(spk):
            raise SpecError("invalidKey")
        held = self.chains.setdefault((sender, encode_group(group)), OrderedDict())
        if chain_id in held:
            return "ignored"
        held[chain_id] = ReceiverChain(start=iteration, iteration=iteration, ck=ck, signing_pk=spk)
        while len(held) > MAX_CHAINS:                           # S6
            held.popitem(last=False)
        return "stored"

    def decrypt(self, sender: bytes, group: bytes, m: bytes) -> bytes:
        trial = copy.deepcopy(self.chains)
        pt = self._decrypt(trial, sender, group, m)
        self.chains = trial                                     # commit only on success
        return pt

    @staticmethod
    def _decrypt(chains: dict, sender: bytes, group: bytes, m: bytes) -> bytes:
        if len(m) == 0:
            raise SpecError("invalidMessage")                   # S5
        if m[0] != TYPE_MESSAGE:
            raise SpecError("unsupportedVersion")
        if len(m) < MIN_MESSAGE:
            raise SpecError("invalidMessage")
        chain_id, iteration, commit = m[1:33], read_u32(m, 33), m[37:69]
        c = chains.get((sender, encode_group(group)), {}).get(chain_id)
        if c is None:
            raise SpecError("unknownChain")
        signed, sig = m[:-SIG_LEN], m[-SIG_LEN:]
        if not ed25519_verify(c.signing_pk, sig, encode_group(group) + sender + signed):
            raise SpecError("invalidSignature")
        if iteration < c.iteration:
            if iteration in c.skipped:
                mk = c.skipped.pop(iteration)
            elif iteration < c.start:
                raise SpecError("messageKeyUnavailable")
            else:
                raise SpecError("duplicateMessage")
        else:
            if iteration - c.iteration > MAX_SKIP:              # S2
                raise SpecError("tooManySkippedMessages")
            while c.iteration < iteration:
                mk, c.ck = kdf_ck(c.ck)
                c.skipped[c.iteration] = mk
                while len(c.skipped) > MAX_STORED:              # S3
                    c.skipped.popitem(last=False)
                c.iteration += 1
            mk, c.ck = kdf_ck(c.ck)
            c.iteration += 1
        key, nonce, derived = sender_message_keys(mk)
        if not hmac.compare_digest(derived, commit):
            raise SpecError("invalidMessage")                   # before any AEAD work
        aad = bytes([TYPE_MESSAGE]) + encode_group(group) + sender + chain_id + u32(iteration) + commit
        return unpad(aead_open(key, nonce, signed[HEAD_LEN:], aad))
