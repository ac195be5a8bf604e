"""Independent reference of SPEC.md §5 (Sender Keys).

Built only on spec_primitives (PyPI `cryptography` + plain Python). Used by
generate_sessions.py for TestVectors/protocol/sender_key.json.

Resolutions of points SPEC.md leaves open:
S1. A distribution message must be exactly 101 bytes (shorter or longer: invalidMessage);
    an empty one is invalidMessage (no type byte). Not in the vectors (the format has no
    distribution error tests).
S2. "More than MAX_SKIP ahead" means iteration - current > 256; exactly 256 ahead stores
    256 skipped keys and decrypts (the same boundary as §4's Nr + MAX_SKIP < until).
S3. Eviction: after each stored key, while more than 2000 are stored for the chain, the
    oldest (first inserted, i.e. lowest iteration) is dropped.
S4. The sender refuses to encrypt once the iteration no longer fits in u32 (chainExhausted).
S5. An empty message is invalidMessage (no type byte).
S6. Signature verification uses the chain's signing key from the distribution; the
    reference's verifier is OpenSSL's (rejects S >= L), which agrees with libsodium on
    every signature in the vectors.
"""
from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, field

from spec_primitives import (SpecError, ZERO32, aead_open, aead_seal, ed25519_point_is_valid, ed25519_pub,
                             ed25519_sign, ed25519_verify, hkdf, kdf_ck, pad, read_u32, sha256, u32, unpad)

INFO_SENDER_KEY = b"SessionKit SenderKey v1"
TYPE_DISTRIBUTION = 0x10
TYPE_MESSAGE = 0x11
DISTRIBUTION_LEN = 1 + 32 + 4 + 32 + 32          # 101
MIN_MESSAGE = 1 + 32 + 4 + 16 + 64               # 117
SIG_LEN = 64
MAX_SKIP = 256
MAX_STORED = 2000
MAX_U32 = 0xFFFFFFFF


def sender_message_keys(mk: bytes) -> tuple[bytes, bytes]:
    out = hkdf(ZERO32, mk, INFO_SENDER_KEY, 44)
    return out[:32], out[32:]


def seal_message(chain_id: bytes, iteration: int, mk: bytes, padded: bytes, signing_seed: bytes) -> bytes:
    head = bytes([TYPE_MESSAGE]) + chain_id + u32(iteration)
    key, nonce = sender_message_keys(mk)
    signed = head + aead_seal(key, nonce, padded, head)
    return signed + ed25519_sign(signing_seed, signed)


class SenderChain:
    """The sending side of one chain."""

    def __init__(self, chain_key0: bytes, signing_seed: bytes):
        self.chain_id = sha256(chain_key0)
        self.iteration = 0
        self.ck = chain_key0
        self.signing_seed = signing_seed
        self.signing_pk = ed25519_pub(signing_seed)

    def advance_to(self, iteration: int) -> None:
        while self.iteration < iteration:
            _, self.ck = kdf_ck(self.ck)
            self.iteration += 1

    def distribution(self) -> bytes:
        return bytes([TYPE_DISTRIBUTION]) + self.chain_id + u32(self.iteration) + self.ck + self.signing_pk

    def encrypt(self, plaintext: bytes, *, padded: bytes | None = None) -> bytes:
        if self.iteration > MAX_U32:
            raise SpecError("chainExhausted")
        mk, ck = kdf_ck(self.ck)
        m = seal_message(self.chain_id, self.iteration, mk, pad(plaintext) if padded is None else padded,
                         self.signing_seed)
        self.ck = ck
        self.iteration += 1
        return m

    def forge(self, plaintext: bytes = b"", *, padded: bytes | None = None) -> bytes:
        """What encrypt would return next, without changing this chain."""
        return copy.deepcopy(self).encrypt(plaintext, padded=padded)


@dataclass
class ReceiverChain:
    iteration: int
    ck: bytes
    signing_pk: bytes
    skipped: "OrderedDict[int, bytes]" = field(default_factory=OrderedDict)


class SenderKeyReceiver:
    def __init__(self):
        self.chains: dict[bytes, ReceiverChain] = {}

    def state(self):
        return copy.deepcopy(self.chains)

    def process_distribution(self, d: bytes) -> None:
        if len(d) == 0:
            raise SpecError("invalidMessage")
        if d[0] != TYPE_DISTRIBUTION:
            raise SpecError("unsupportedVersion")
        if len(d) != DISTRIBUTION_LEN:
            raise SpecError("invalidMessage")                   # S1
        chain_id, iteration, ck, spk = d[1:33], read_u32(d, 33), d[37:69], d[69:101]
        if not ed25519_point_is_valid(spk):
            raise SpecError("invalidKey")
        if chain_id in self.chains:
            return                                              # already held: ignored
        self.chains[chain_id] = ReceiverChain(iteration=iteration, ck=ck, signing_pk=spk)

    def decrypt(self, m: bytes) -> bytes:
        trial = copy.deepcopy(self.chains)
        pt = self._decrypt(trial, m)
        self.chains = trial                                     # commit only on success
        return pt

    @staticmethod
    def _decrypt(chains: dict, m: bytes) -> bytes:
        if len(m) == 0:
            raise SpecError("invalidMessage")                   # S5
        if m[0] != TYPE_MESSAGE:
            raise SpecError("unsupportedVersion")
        if len(m) < MIN_MESSAGE:
            raise SpecError("invalidMessage")
        chain_id, iteration = m[1:33], read_u32(m, 33)
        c = chains.get(chain_id)
        if c is None:
            raise SpecError("unknownChain")
        signed, sig = m[:-SIG_LEN], m[-SIG_LEN:]
        if not ed25519_verify(c.signing_pk, sig, signed):
            raise SpecError("invalidSignature")
        if iteration < c.iteration:
            if iteration not in c.skipped:
                raise SpecError("duplicateMessage")
            mk = c.skipped.pop(iteration)
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
        key, nonce = sender_message_keys(mk)
        head = m[:37]
        return unpad(aead_open(key, nonce, signed[37:], head))
