"""Generate TestVectors/protocol/ratchet.json and sender_key.json (SPEC.md §3-§5, §8).

    python3 generate_sessions.py [--seed N] [--out DIR]

The output is a pure function of the seed (all randomness comes from spec_primitives.Drbg).
Every test is built by driving the independent references in ref_ratchet.py /
ref_sender_key.py; each expected outcome written below is asserted against the reference
while generating, every error event is checked to leave the receiver's state unchanged,
and afterwards every test is replayed from its JSON alone through fresh reference
parties (self-consistency pass).
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spec_primitives import (L, P, Drbg, SpecError, ed25519_pub, ed25519_sign, pad, read_u32,  # noqa: E402
                             u32, x25519_pub)
from ref_ratchet import (DEFAULT_MAX_SKIP, DEFAULT_MAX_STORED, Party,  # noqa: E402
                         spk_signature)
from ref_sender_key import SenderChain, SenderKeyReceiver  # noqa: E402

A, B = "alice", "bob"
KEY_POOL = 400
SOURCE_RATCHET = ("TestVectors/generator/generate_sessions.py (independent Python reference "
                  "ref_ratchet.py, SPEC.md §3-§4)")
SOURCE_SENDER_KEY = ("TestVectors/generator/generate_sessions.py (independent Python reference "
                     "ref_sender_key.py, SPEC.md §5)")
KEYS_NOTE = "ratchet_keys lists exactly the keys each party draws in this scenario, in order"


def flip(m: bytes, index: int, bit: int = 0) -> bytes:
    b = bytearray(m)
    b[index] ^= 1 << bit
    return bytes(b)


def replace(m: bytes, index: int, new: bytes) -> bytes:
    return m[:index] + new + m[index + len(new):]


def outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except SpecError as e:
        return e.name, None


# =====================================================================================
# Ratchet
# =====================================================================================
class RatchetCase:
    def __init__(self, seed: int, tid: int, comment: str, *, opk: bool = True,
                 max_skip: int = DEFAULT_MAX_SKIP, max_stored: int = DEFAULT_MAX_STORED, note: str = ""):
        self.tid, self.comment, self.note = tid, comment, note
        d = Drbg(seed, f"ratchet/{tid}/setup")
        self.alice_seed, self.ek_sk = d.bytes(32), d.bytes(32)
        self.bob_seed, self.spk_sk = d.bytes(32), d.bytes(32)
        self.spk_id = read_u32(d.bytes(4), 0)
        self.opk_sk = d.bytes(32) if opk else None
        self.opk_id = read_u32(d.bytes(4), 0) if opk else None
        if opk and self.opk_id == self.spk_id:
            self.opk_id ^= 1
        self.max_skip, self.max_stored = max_skip, max_stored
        ka, kb = Drbg(seed, f"ratchet/{tid}/alice-keys"), Drbg(seed, f"ratchet/{tid}/bob-keys")
        self.alice_pool = [ka.bytes(32) for _ in range(KEY_POOL)]
        self.bob_pool = [kb.bytes(32) for _ in range(KEY_POOL)]
        self.aux = Drbg(seed, f"ratchet/{tid}/aux")
        self.parties = make_parties(self.alice_seed, self.ek_sk, self.alice_pool, self.bob_seed, self.spk_sk,
                                    self.spk_id, self.opk_sk, self.opk_id, self.bob_pool, max_skip, max_stored)
        self.events: list = []
        self.sends: list = []   # (from, plaintext, message)

    # ------------------------------------------------ helpers for scenarios
    @property
    def alice(self) -> Party:
        return self.parties[A]

    @property
    def bob(self) -> Party:
        return self.parties[B]

    @property
    def spk_pub(self) -> bytes:
        return x25519_pub(self.spk_sk)

    def pt(self, n: int | None = None) -> bytes:
        if n is None:
            n = 1 + self.aux.int_below(60)
        return self.aux.bytes(n)

    def rand(self, n: int) -> bytes:
        return self.aux.bytes(n)

    def msg(self, k: int) -> bytes:
        return self.sends[k][2]

    def send(self, frm: str, plaintext: bytes | None = None) -> int:
        pt = self.pt() if plaintext is None else plaintext
        m = self.parties[frm].encrypt(pt)
        self.sends.append((frm, pt, m))
        self.events.append({"op": "send", "from": frm, "plaintext": pt.hex(), "message": m.hex()})
        return len(self.sends) - 1

    def _deliver(self, to: str, m: bytes, expect: str):
        party = self.parties[to]
        before = party.state()
        res, pt = outcome(party.decrypt, m)
        if res == "ok":
            assert expect == "ok", f"test {self.tid}: expected {expect}, reference decrypted"
        else:
            assert expect in (res, "any"), f"test {self.tid}: expected {expect}, reference says {res}"
            assert party.state() == before, f"test {self.tid}: failed decrypt changed state"
        return pt

    def recv(self, to: str, k: int, expect: str = "ok") -> None:
        frm, pt, m = self.sends[k]
        got = self._deliver(to, m, expect)
        if expect == "ok":
            assert got == pt, f"test {self.tid}: wrong plaintext for send {k}"
            self.events.append({"op": "recv", "to": to, "send": k, "plaintext": pt.hex()})
        else:
            self.events.append({"op": "recv", "to": to, "send": k, "error": expect})

    def raw(self, to: str, m: bytes, expect: str) -> None:
        assert expect != "ok"
        self._deliver(to, m, expect)
        self.events.append({"op": "recv", "to": to, "message": m.hex(), "error": expect})

    def handshake(self) -> None:
        """a prekey message to Bob and a reply to Alice: afterwards Alice sends 0x01 messages."""
        a = self.send(A)
        self.recv(B, a)
        b = self.send(B)
        self.recv(A, b)

    def second_initiator(self, *, identity_seed: bytes | None = None, use_opk: bool = True) -> Party:
        """Another initiator instance (new EK_A, own ratchet keys) built from Bob's bundle."""
        spk_pub = self.spk_pub
        opk = use_opk and self.opk_sk is not None
        return Party.initiator(identity_seed or self.alice_seed, self.rand(32), [self.rand(32) for _ in range(4)],
                               ik_b=ed25519_pub(self.bob_seed), spk_pub=spk_pub, spk_id=self.spk_id,
                               spk_sig=spk_signature(self.bob_seed, spk_pub),
                               opk_pub=x25519_pub(self.opk_sk) if opk else None,
                               opk_id=self.opk_id if opk else None)

    def to_json(self) -> dict:
        a_used, b_used = self.alice.keys_used, self.bob.keys_used
        t = {
            "id": self.tid,
            "comment": self.comment,
            "alice": {"identity_seed": self.alice_seed.hex(), "x3dh_ephemeral_sk": self.ek_sk.hex(),
                      "ratchet_keys": [k.hex() for k in self.alice_pool[:a_used]]},
            "bob": {"identity_seed": self.bob_seed.hex(), "spk_sk": self.spk_sk.hex(), "spk_id": self.spk_id,
                    "opk_sk": self.opk_sk.hex() if self.opk_sk is not None else None,
                    "opk_id": self.opk_id, "ratchet_keys": [k.hex() for k in self.bob_pool[:b_used]]},
            "max_skip": self.max_skip,
            "max_stored": self.max_stored,
            "note": KEYS_NOTE + (f"; {self.note}" if self.note else ""),
            "events": self.events,
        }
        return t


def make_parties(alice_seed, ek_sk, alice_keys, bob_seed, spk_sk, spk_id, opk_sk, opk_id, bob_keys,
                 max_skip, max_stored) -> dict:
    spk_pub = x25519_pub(spk_sk)
    alice = Party.initiator(alice_seed, ek_sk, alice_keys, ik_b=ed25519_pub(bob_seed), spk_pub=spk_pub,
                            spk_id=spk_id, spk_sig=spk_signature(bob_seed, spk_pub),
                            opk_pub=x25519_pub(opk_sk) if opk_sk is not None else None, opk_id=opk_id,
                            max_skip=max_skip, max_stored=max_stored)
    bob = Party.responder(bob_seed, spk_sk, spk_id, opk_sk, opk_id, bob_keys,
                          max_skip=max_skip, max_stored=max_stored)
    return {A: alice, B: bob}


def replay_ratchet(t: dict) -> None:
    """Self-consistency: run one JSON test through fresh reference parties."""
    h = bytes.fromhex
    a, b = t["alice"], t["bob"]
    parties = make_parties(h(a["identity_seed"]), h(a["x3dh_ephemeral_sk"]), [h(k) for k in a["ratchet_keys"]],
                           h(b["identity_seed"]), h(b["spk_sk"]), b["spk_id"],
                           h(b["opk_sk"]) if b["opk_sk"] is not None else None, b["opk_id"],
                           [h(k) for k in b["ratchet_keys"]], t["max_skip"], t.get("max_stored", 2000))
    sends = []
    for i, e in enumerate(t["events"]):
        where = f"ratchet test {t['id']} event {i}"
        if e["op"] == "send":
            m = parties[e["from"]].encrypt(h(e["plaintext"]))
            assert m.hex() == e["message"], where
            sends.append(m)
            continue
        m = sends[e["send"]] if "send" in e else h(e["message"])
        party = parties[e["to"]]
        before = party.state()
        res, pt = outcome(party.decrypt, m)
        if "error" in e:
            assert res != "ok" and (e["error"] == "any" or e["error"] == res), f"{where}: {res}"
            assert party.state() == before, where
        else:
            assert res == "ok" and pt.hex() == e["plaintext"], f"{where}: {res}"
    for name in (A, B):
        assert parties[name].keys_used == len(t[name]["ratchet_keys"]), f"ratchet test {t['id']}: key count"


# ------------------------------------------------------------------ ratchet scenarios
RATCHET_SCENARIOS = []


def scenario(comment: str, **kw):
    def deco(fn):
        RATCHET_SCENARIOS.append((comment, kw, fn))
        return fn
    return deco


@scenario("basic exchange with a one-time prekey: prekey message, reply, then a 0x01 message each way")
def _(c: RatchetCase):
    a0 = c.send(A)
    assert c.msg(a0)[0] == 0x02 and c.msg(a0)[69] == 0x01 and len(c.msg(a0)) == 74 + 41 + 64 + 16
    c.recv(B, a0)
    b0 = c.send(B)
    assert c.msg(b0)[0] == 0x01
    c.recv(A, b0)
    a1 = c.send(A)
    assert c.msg(a1)[0] == 0x01
    c.recv(B, a1)
    c.recv(A, c.send(B))


@scenario("basic exchange without a one-time prekey (flag 0x00, 70-byte prefix)", opk=False)
def _(c: RatchetCase):
    a0 = c.send(A)
    assert c.msg(a0)[69] == 0x00 and len(c.msg(a0)) == 70 + 41 + 64 + 16
    c.recv(B, a0)
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("several messages per chain, all delivered in order")
def _(c: RatchetCase):
    for _ in range(3):
        c.recv(B, c.send(A))
    for _ in range(3):
        c.recv(A, c.send(B))
    for _ in range(2):
        c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("Alice keeps sending prekey messages until she has decrypted a reply, then switches to 0x01")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.recv(B, a0)
    b0 = c.send(B)
    a1 = c.send(A)
    assert c.msg(a1)[0] == 0x02
    c.recv(B, a1)
    c.recv(A, b0)
    a2 = c.send(A)
    assert c.msg(a2)[0] == 0x01
    c.recv(B, a2)


@scenario("out-of-order delivery within one of Alice's chains (4, 2, 1, 3)")
def _(c: RatchetCase):
    c.handshake()
    s = [c.send(A) for _ in range(4)]
    for i in (3, 1, 0, 2):
        c.recv(B, s[i])
    c.recv(A, c.send(B))


@scenario("out-of-order delivery of Bob's first chain to Alice, who has no receiving chain yet")
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    s = [c.send(B) for _ in range(3)]
    for i in (2, 0, 1):
        c.recv(A, s[i])
    c.recv(B, c.send(A))


@scenario("out-of-order delivery across one DH step: old-chain keys stored through PN")
def _(c: RatchetCase):
    c.handshake()
    a1, a2, a3 = c.send(A), c.send(A), c.send(A)
    c.recv(B, a1)
    c.recv(A, c.send(B))
    a4 = c.send(A)
    assert read_u32(c.msg(a4), 33) == 3        # PN
    c.recv(B, a4)
    c.recv(B, a3)
    c.recv(B, a2)
    c.recv(A, c.send(B))


@scenario("out-of-order delivery across several DH steps, old chains delivered last")
def _(c: RatchetCase):
    c.handshake()
    a1, a2 = c.send(A), c.send(A)
    c.recv(B, a1)
    b1 = c.send(B)
    c.recv(A, b1)
    a3, a4 = c.send(A), c.send(A)
    c.recv(B, a4)
    b2, b3 = c.send(B), c.send(B)
    c.recv(A, b3)
    a5 = c.send(A)
    c.recv(B, a5)
    c.recv(B, a3)
    c.recv(B, a2)
    c.recv(A, b2)
    c.recv(A, c.send(B))


@scenario("prekey messages out of order: Bob receives Alice's second prekey message first (OPK used once)")
def _(c: RatchetCase):
    a0, a1 = c.send(A), c.send(A)
    c.recv(B, a1)
    c.recv(B, a0)
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))


@scenario("prekey messages out of order without a one-time prekey", opk=False)
def _(c: RatchetCase):
    a0, a1, a2 = c.send(A), c.send(A), c.send(A)
    c.recv(B, a2)
    c.recv(B, a0)
    c.recv(B, a1)
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))


@scenario("early prekey messages arrive after Bob replied and Alice already switched to 0x01 messages")
def _(c: RatchetCase):
    a0, a1, a2 = c.send(A), c.send(A), c.send(A)
    c.recv(B, a2)
    b0 = c.send(B)
    c.recv(A, b0)
    a3 = c.send(A)
    assert c.msg(a3)[0] == 0x01
    c.recv(B, a0)
    c.recv(B, a3)
    c.recv(B, a1)
    c.recv(A, c.send(B))


@scenario("long ping-pong: 25 round trips, every message a DH step (50 steps in all)")
def _(c: RatchetCase):
    for _ in range(25):
        c.recv(B, c.send(A))
        c.recv(A, c.send(B))


@scenario("ping-pong with bursts of 1-3 messages per turn for 12 rounds, delivered in order", opk=False)
def _(c: RatchetCase):
    for _ in range(12):
        for who, to in ((A, B), (B, A)):
            s = [c.send(who) for _ in range(1 + c.aux.int_below(3))]
            for k in s:
                c.recv(to, k)


def random_conversation(c: RatchetCase, steps: int) -> None:
    """Random interleaving of sends and out-of-order deliveries; every message is delivered
    once and (within the default limits) must decrypt."""
    pending = {A: [], B: []}     # messages waiting for delivery TO the party
    bob_has_session = False
    for _ in range(steps):
        r = c.aux.int_below(4)
        if r == 0 and len(pending[B]) < 5:
            pending[B].append(c.send(A))
        elif r == 1 and bob_has_session and len(pending[A]) < 5:
            pending[A].append(c.send(B))
        elif r in (2, 3):
            to = B if r == 2 else A
            if pending[to]:
                k = pending[to].pop(c.aux.int_below(len(pending[to])))
                c.recv(to, k)
                bob_has_session = bob_has_session or to == B
    for to in (B, A):
        while pending[to]:
            c.recv(to, pending[to].pop(c.aux.int_below(len(pending[to]))))


@scenario("random conversation 1: interleaved sends, out-of-order deliveries across DH steps")
def _(c: RatchetCase):
    random_conversation(c, 70)


@scenario("random conversation 2: interleaved sends, out-of-order deliveries across DH steps", opk=False)
def _(c: RatchetCase):
    random_conversation(c, 70)


@scenario("random conversation 3 with small limits (max_skip 4, max_stored 6)", max_skip=4, max_stored=6)
def _(c: RatchetCase):
    random_conversation(c, 70)


@scenario("crossing messages: both parties send before receiving the other's message")
def _(c: RatchetCase):
    c.handshake()
    a1, b1 = c.send(A), c.send(B)
    c.recv(A, b1)
    c.recv(B, a1)
    a2, b2 = c.send(A), c.send(B)
    c.recv(B, a2)
    c.recv(A, b2)
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("replay on Bob's current receiving chain is duplicateMessage; later messages still decrypt")
def _(c: RatchetCase):
    c.handshake()
    a1 = c.send(A)
    c.recv(B, a1)
    c.recv(B, a1, "duplicateMessage")
    a2 = c.send(A)
    c.recv(B, a2)
    c.recv(B, a1, "duplicateMessage")
    c.recv(B, a2, "duplicateMessage")
    c.raw(B, flip(c.msg(a2), 60, 0), "duplicateMessage")   # decided before any AEAD work (SPEC §4)


@scenario("replay on Alice's current receiving chain is duplicateMessage")
def _(c: RatchetCase):
    c.handshake()
    b1 = c.send(B)
    c.recv(A, b1)
    c.recv(A, b1, "duplicateMessage")
    c.recv(B, c.send(A))


@scenario("replayed prekey message: duplicateMessage while its chain is current, some error once the "
          "chain is gone")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.recv(B, a0)
    c.recv(B, a0, "duplicateMessage")
    c.recv(A, c.send(B))
    c.recv(B, a0, "duplicateMessage")
    c.recv(B, c.send(A))
    c.recv(B, a0, "any")


@scenario("replay of a message whose skipped key was already used is duplicateMessage")
def _(c: RatchetCase):
    c.handshake()
    a1, a2, a3 = c.send(A), c.send(A), c.send(A)
    c.recv(B, a3)
    c.recv(B, a1)
    c.recv(B, a1, "duplicateMessage")
    c.recv(B, a2)
    c.recv(B, a2, "duplicateMessage")
    c.recv(B, a3, "duplicateMessage")


@scenario("message for an old chain whose keys are gone: some error (Alice replays Bob's first chain)")
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    b0 = c.send(B)
    c.recv(A, b0)
    c.recv(B, c.send(A))
    b1 = c.send(B)
    c.recv(A, b1)
    c.recv(A, b0, "any")
    c.recv(A, b1, "duplicateMessage")


@scenario("tampered header.dh (low bit of the key; still canonical) is invalidMessage; the genuine "
          "message then decrypts")
def _(c: RatchetCase):
    c.handshake()
    a1 = c.send(A)
    c.raw(B, flip(c.msg(a1), 1, 0), "invalidMessage")
    c.raw(B, flip(c.msg(a1), 17, 3), "invalidMessage")
    c.recv(B, a1)
    a2 = c.send(A)
    c.raw(B, flip(c.msg(a2), 5, 6), "invalidMessage")
    c.recv(B, a2)


@scenario("tampered header PN and N fields and tampered ciphertext/tag are invalidMessage")
def _(c: RatchetCase):
    c.handshake()
    a1, a2 = c.send(A), c.send(A)
    c.recv(B, a1)
    m = c.msg(a2)
    c.raw(B, flip(m, 36, 0), "invalidMessage")     # PN 1 -> 0 on the current chain
    c.raw(B, flip(m, 33, 7), "invalidMessage")     # PN high bit (ignored on the current chain)
    c.raw(B, flip(m, 40, 1), "invalidMessage")     # N 1 -> 3 (skip stays within MAX_SKIP)
    c.raw(B, flip(m, 41, 0), "invalidMessage")     # first ciphertext byte
    c.raw(B, flip(m, 41 + 40, 5), "invalidMessage")
    c.raw(B, flip(m, len(m) - 1, 7), "invalidMessage")   # last tag byte
    c.raw(B, flip(m, len(m) - 16, 0), "invalidMessage")  # first tag byte
    c.recv(B, a2)


@scenario("tampered messages to Alice (0x01 from Bob): header, ciphertext and tag bits")
def _(c: RatchetCase):
    c.handshake()
    b1 = c.send(B)
    m = c.msg(b1)
    c.raw(A, flip(m, 2, 4), "invalidMessage")
    c.raw(A, flip(m, 40, 1), "invalidMessage")     # N 1 -> 3
    c.raw(A, flip(m, 60, 2), "invalidMessage")
    c.raw(A, flip(m, len(m) - 3, 1), "invalidMessage")
    c.recv(A, b1)


@scenario("header.dh with bit 255 set is non-canonical: invalidKey (0x01 messages both ways)")
def _(c: RatchetCase):
    c.handshake()
    a1 = c.send(A)
    c.raw(B, flip(c.msg(a1), 32, 7), "invalidKey")
    c.recv(B, a1)
    b1 = c.send(B)
    c.raw(A, flip(c.msg(b1), 32, 7), "invalidKey")
    c.recv(A, b1)


@scenario("header.dh >= p (bit 255 clear) is non-canonical: invalidKey")
def _(c: RatchetCase):
    c.handshake()
    a1 = c.send(A)
    for v in (P, P + 1, P + 18, 2**255 - 1):
        c.raw(B, replace(c.msg(a1), 1, v.to_bytes(32, "little")), "invalidKey")
    c.recv(B, a1)


@scenario("header.dh of small order (u = 0, u = 1): the DH output is all zero, invalidKey")
def _(c: RatchetCase):
    c.handshake()
    a1 = c.send(A)
    c.raw(B, replace(c.msg(a1), 1, bytes(32)), "invalidKey")
    c.raw(B, replace(c.msg(a1), 1, (1).to_bytes(32, "little")), "invalidKey")
    c.recv(B, a1)


@scenario("truncated 0x01 messages are invalidMessage (56 bytes, 41 bytes, 1 byte)")
def _(c: RatchetCase):
    c.handshake()
    a1 = c.send(A)
    m = c.msg(a1)
    c.raw(B, m[:56], "invalidMessage")
    c.raw(B, m[:41], "invalidMessage")
    c.raw(B, m[:1], "invalidMessage")
    c.raw(B, m[:-1], "invalidMessage")       # long enough, but the tag is cut: AEAD fails
    c.recv(B, a1)


@scenario("an authentic 57-byte message (minimum length: empty AEAD plaintext) is invalidPadding")
def _(c: RatchetCase):
    c.handshake()
    m = c.alice.forge(padded=b"")
    assert len(m) == 57
    c.raw(B, m, "invalidPadding")
    c.recv(B, c.send(A))


@scenario("authentic messages whose padded plaintext is invalid are invalidPadding; state unchanged")
def _(c: RatchetCase):
    c.handshake()
    good = pad(b"hello")
    c.raw(B, c.alice.forge(padded=b"\x00" + good[1:]), "invalidPadding")          # first byte not 0x01
    c.raw(B, c.alice.forge(padded=good[:-4] + u32(len(good) - 4)), "invalidPadding")  # L > length - 5
    c.raw(B, c.alice.forge(padded=b"\x01\x00\x00\x00"), "invalidPadding")           # shorter than 5
    c.raw(A, c.bob.forge(padded=good[:-4] + u32(0xFFFFFFFF)), "invalidPadding")
    c.recv(B, c.send(A, b"hello"))
    c.recv(A, c.send(B))


@scenario("authentic prekey message with invalid padding: invalidPadding, no session created, OPK kept")
def _(c: RatchetCase):
    c.raw(B, c.alice.forge(padded=b"\x02" + bytes(59) + u32(58)), "invalidPadding")
    a0 = c.send(A)
    c.raw(B, c.alice.forge(padded=b""), "invalidPadding")
    c.recv(B, a0)
    c.recv(A, c.send(B))


@scenario("padding bucket edges: plaintexts of 59, 60, 123, 124, 251 and 252 bytes", opk=False)
def _(c: RatchetCase):
    c.handshake()
    for n in (59, 60, 123, 124, 251, 252):
        who, to = (A, B) if n % 2 else (B, A)
        c.recv(to, c.send(who, c.pt(n)))


@scenario("empty plaintexts in both directions, including the first prekey message")
def _(c: RatchetCase):
    a0 = c.send(A, b"")
    c.recv(B, a0)
    c.recv(A, c.send(B, b""))
    c.recv(B, c.send(A, b""))


@scenario("one 70,000-byte plaintext (padded to 131072 bytes, a multiple of 65536)", opk=False)
def _(c: RatchetCase):
    c.handshake()
    k = c.send(A, c.pt(70000))
    assert len(c.msg(k)) == 41 + 131072 + 16
    c.recv(B, k)
    c.recv(A, c.send(B))


@scenario("unsupported type bytes are unsupportedVersion (0x00, 0x03, 0x11, 0xff; also on a short message)")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, replace(c.msg(a0), 0, b"\x03"), "unsupportedVersion")
    c.raw(B, replace(c.msg(a0), 0, b"\xff"), "unsupportedVersion")
    c.recv(B, a0)
    b0 = c.send(B)
    c.raw(A, replace(c.msg(b0), 0, b"\x00"), "unsupportedVersion")
    c.raw(A, replace(c.msg(b0), 0, b"\x11"), "unsupportedVersion")
    c.raw(A, b"\x03" + c.msg(b0)[1:20], "unsupportedVersion")     # SPEC §4: type byte is checked first
    c.recv(A, b0)


@scenario("prekey flag byte other than 0x00/0x01 is invalidMessage")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, replace(c.msg(a0), 69, b"\x02"), "invalidMessage")
    c.raw(B, replace(c.msg(a0), 69, b"\xff"), "invalidMessage")
    c.recv(B, a0)
    a1 = c.send(A)
    c.raw(B, replace(c.msg(a1), 69, b"\x02"), "invalidMessage")   # with an existing session too
    c.recv(B, a1)


@scenario("truncated prekey messages are invalidMessage (69 bytes; 74+56 bytes with OPK)")
def _(c: RatchetCase):
    a0 = c.send(A)
    m = c.msg(a0)
    c.raw(B, m[:69], "invalidMessage")
    c.raw(B, m[:70], "invalidMessage")
    c.raw(B, m[:74 + 56], "invalidMessage")
    c.raw(B, m[:70 + 57], "invalidMessage")   # long enough for flag 0x00, not for flag 0x01
    c.recv(B, a0)


@scenario("truncated prekey message without OPK (70+56 bytes) is invalidMessage", opk=False)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, c.msg(a0)[:70 + 56], "invalidMessage")
    c.recv(B, a0)


@scenario("prekey message with non-canonical EK_A (bit 255 set; value >= p) is invalidKey")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, flip(c.msg(a0), 64, 7), "invalidKey")
    c.raw(B, replace(c.msg(a0), 33, (P + 5).to_bytes(32, "little")), "invalidKey")
    c.recv(B, a0)


@scenario("prekey message whose inner header.dh is non-canonical is invalidKey")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, flip(c.msg(a0), 74 + 32, 7), "invalidKey")
    c.recv(B, a0)
    a1 = c.send(A)
    c.raw(B, flip(c.msg(a1), 74 + 32, 7), "invalidKey")   # existing session
    c.recv(B, a1)


@scenario("prekey message with EK_A of small order (all zero, canonical): X3DH DH is zero, invalidKey",
          opk=False)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, replace(c.msg(a0), 33, bytes(32)), "invalidKey")
    c.recv(B, a0)


@scenario("prekey message with an IK_A that is not a valid Ed25519 point (identity, small order) is invalidKey")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, replace(c.msg(a0), 1, b"\x01" + bytes(31)), "invalidKey")
    c.recv(B, a0)


@scenario("prekey message whose IK_A is another valid identity key (fresh Bob): X3DH disagrees, "
          "invalidMessage; no OPK consumed")
def _(c: RatchetCase):
    a0 = c.send(A)
    other = ed25519_pub(c.rand(32))
    c.raw(B, replace(c.msg(a0), 1, other), "invalidMessage")
    c.recv(B, a0)
    c.recv(A, c.send(B))


@scenario("prekey message naming an unknown spk_id is unknownPreKey (fresh Bob)")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, replace(c.msg(a0), 65, u32(c.spk_id ^ 1)), "unknownPreKey")
    c.raw(B, replace(c.msg(a0), 65, u32(c.spk_id ^ 0x80000000)), "unknownPreKey")
    c.recv(B, a0)


@scenario("prekey message naming an unknown opk_id is unknownPreKey (fresh Bob)")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, replace(c.msg(a0), 70, u32(c.opk_id ^ 1)), "unknownPreKey")
    c.recv(B, a0)


@scenario("prekey message naming a one-time prekey Bob never issued (he has none) is unknownPreKey",
          opk=False)
def _(c: RatchetCase):
    a0 = c.send(A)
    m = c.msg(a0)
    forged = m[:69] + b"\x01" + u32(c.aux.int_below(2**32)) + m[70:]
    c.raw(B, forged, "unknownPreKey")
    c.recv(B, a0)


@scenario("one-time prekey reused after its first use (a new EK_A naming the same opk_id) is unknownPreKey")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.recv(B, a0)
    other = c.second_initiator()
    c.raw(B, other.encrypt(c.pt()), "unknownPreKey")
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))


@scenario("prekey message with the same EK_A as Bob's session but a different (valid) IK_A is invalidMessage")
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    a1 = c.send(A)
    c.raw(B, replace(c.msg(a1), 1, ed25519_pub(c.rand(32))), "invalidMessage")
    c.recv(B, a1)


@scenario("prekey message with the same EK_A as Bob's session but a different spk_id is invalidMessage "
          "(prefix match; no prekey lookup when the EK_A session exists)",
          note="Bob holds one signed prekey, so the changed spk_id is also unknown to him: per SPEC §4 the "
               "session created from the same EK_A is used and its prefix must match, hence invalidMessage")
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    a1 = c.send(A)
    c.raw(B, replace(c.msg(a1), 65, u32(c.spk_id ^ 2)), "invalidMessage")
    c.recv(B, a1)


@scenario("prekey message with the same EK_A as Bob's session but without the OPK part (flag 0x00) "
          "is invalidMessage")
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    a1 = c.send(A)
    m = c.msg(a1)
    c.raw(B, m[:69] + b"\x00" + m[74:], "invalidMessage")
    c.recv(B, a1)


@scenario("a 0x01 message to Bob before he has any session is noSession")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, c.msg(a0)[74:], "noSession")
    c.recv(B, a0)


@scenario("a prekey message delivered to Alice (who holds no prekeys) is unknownPreKey")
def _(c: RatchetCase):
    other = c.second_initiator(identity_seed=c.bob_seed)
    c.raw(A, other.encrypt(c.pt()), "unknownPreKey")
    a0 = c.send(A)
    c.recv(B, a0)
    b0 = c.send(B)
    c.raw(A, other.encrypt(c.pt()), "unknownPreKey")
    c.recv(A, b0)


@scenario("message to Alice whose header.dh equals DHr (SPK_B) while she has no receiving chain is "
          "invalidMessage")
def _(c: RatchetCase):
    forged = b"\x01" + c.spk_pub + u32(0) + u32(0) + c.rand(80)
    c.raw(A, forged, "invalidMessage")
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("skip limit is checked with no receiving chain: authentic message with PN = 257 is "
          "tooManySkippedMessages at Alice and at a fresh Bob; nothing stored")
def _(c: RatchetCase):
    c.raw(B, c.alice.forge(pn=257), "tooManySkippedMessages")
    a0 = c.send(A)
    c.recv(B, a0)
    c.raw(A, c.bob.forge(pn=257), "tooManySkippedMessages")
    c.recv(A, c.send(B))


@scenario("skip limit with no receiving chain, small limits: PN = 5 > max_skip 4 is tooManySkippedMessages",
          max_skip=4, max_stored=6)
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    c.raw(A, c.bob.forge(pn=5), "tooManySkippedMessages")
    c.raw(A, c.bob.forge(n=5), "tooManySkippedMessages")
    b = [c.send(B) for _ in range(5)]
    c.recv(A, b[4])
    for i in range(4):
        c.recv(A, b[i])


@scenario("default limits: exactly 256 skipped decrypts, 257 skipped is tooManySkippedMessages",
          opk=False)
def _(c: RatchetCase):
    c.handshake()
    s = [c.send(A, b"") for _ in range(258)]
    c.recv(B, s[257], "tooManySkippedMessages")
    c.recv(B, s[256])
    c.recv(B, s[0])
    c.recv(B, s[255])
    c.recv(B, s[257])
    c.recv(B, s[256], "duplicateMessage")
    c.recv(B, s[128])
    c.recv(A, c.send(B))


@scenario("small limits (4/6): exactly 4 skipped decrypts, 5 skipped is tooManySkippedMessages",
          max_skip=4, max_stored=6)
def _(c: RatchetCase):
    c.handshake()
    s = [c.send(A) for _ in range(11)]
    c.recv(B, s[5], "tooManySkippedMessages")
    c.recv(B, s[4])
    c.recv(B, s[10], "tooManySkippedMessages")
    c.recv(B, s[9])      # 8 keys stored -> 0 and 1 evicted
    c.recv(B, s[10])
    c.recv(B, s[3])
    c.recv(A, c.send(B))


@scenario("small limits (4/6): PN beyond max_skip on a DH step is tooManySkippedMessages until the gap "
          "is bridged", max_skip=4, max_stored=6)
def _(c: RatchetCase):
    c.handshake()
    s = [c.send(A) for _ in range(6)]
    c.recv(B, s[0])
    c.recv(A, c.send(B))
    n1 = c.send(A)
    assert read_u32(c.msg(n1), 33) == 6
    c.recv(B, n1, "tooManySkippedMessages")
    c.recv(B, s[5])
    c.recv(B, n1)
    for i in (1, 2, 3, 4):
        c.recv(B, s[i])


@scenario("small limits (4/6): eviction of the oldest skipped keys on the current chain; an evicted "
          "message is duplicateMessage", max_skip=4, max_stored=6)
def _(c: RatchetCase):
    c.handshake()
    s = [c.send(A) for _ in range(10)]
    c.recv(B, s[4])      # stores 0..3
    c.recv(B, s[9])      # stores 5..8 -> 8 stored, 0 and 1 evicted
    c.recv(B, s[0], "duplicateMessage")
    c.recv(B, s[1], "duplicateMessage")
    for i in (2, 3, 5, 6, 7, 8):
        c.recv(B, s[i])
    c.recv(A, c.send(B))


@scenario("small limits (4/6): one message stores 4 old-chain keys (PN) and 4 new-chain keys, evicting "
          "the 2 oldest; the evicted old-chain messages fail with some error", max_skip=4, max_stored=6)
def _(c: RatchetCase):
    c.handshake()
    s = [c.send(A) for _ in range(5)]
    c.recv(B, s[0])
    c.recv(A, c.send(B))
    t = [c.send(A) for _ in range(5)]
    c.recv(B, t[4])      # skip(PN=5) stores s1..s4, DH step, skip(4) stores t0..t3 -> s1, s2 evicted
    c.recv(B, s[1], "any")
    c.recv(B, s[2], "any")
    for k in (s[3], s[4], t[0], t[1], t[2], t[3]):
        c.recv(B, k)
    c.recv(A, c.send(B))


@scenario("small limits (4/6): eviction across three chains by insertion age", max_skip=4, max_stored=6)
def _(c: RatchetCase):
    c.handshake()
    s = [c.send(A) for _ in range(3)]
    c.recv(B, s[2])                   # stores s0, s1
    c.recv(A, c.send(B))
    t = [c.send(A) for _ in range(4)]
    c.recv(B, t[3])                   # stores t0..t2 (5 stored)
    c.recv(A, c.send(B))
    u = [c.send(A) for _ in range(4)]
    c.recv(B, u[3])                   # stores u0..u2 -> 8, evicts s0, s1
    c.recv(B, s[0], "any")
    c.recv(B, s[1], "any")
    for k in t[:3] + u[:3]:
        c.recv(B, k)


@scenario("transactional DH step: a tampered first message of a new chain fails and draws no ratchet key; "
          "the genuine message then decrypts with the same key draw")
def _(c: RatchetCase):
    c.handshake()
    a1 = c.send(A)
    before = c.bob.keys_used
    c.raw(B, flip(c.msg(a1), 50, 0), "invalidMessage")
    assert c.bob.keys_used == before
    c.recv(B, a1)
    assert c.bob.keys_used == before + 1
    b1 = c.send(B)
    c.raw(A, flip(c.msg(b1), len(c.msg(b1)) - 1, 0), "invalidMessage")
    c.recv(A, b1)


@scenario("transactional skip: a tampered message with N = 4 fails without advancing the chain; the "
          "genuine N = 4 and the skipped N = 1..3 then decrypt")
def _(c: RatchetCase):
    c.handshake()
    a1 = c.send(A)
    c.recv(B, a1)
    s = [c.send(A) for _ in range(4)]
    c.raw(B, flip(c.msg(s[3]), 45, 2), "invalidMessage")
    c.recv(B, s[3])
    for i in range(3):
        c.recv(B, s[i])


@scenario("transactional prekey message: a tampered first prekey message creates no session and keeps the "
          "one-time prekey; the genuine one then decrypts")
def _(c: RatchetCase):
    a0, a1 = c.send(A), c.send(A)
    c.raw(B, flip(c.msg(a0), 100, 0), "invalidMessage")
    c.raw(B, flip(c.msg(a1), len(c.msg(a1)) - 2, 4), "invalidMessage")
    c.raw(B, c.msg(a1)[74:], "noSession")
    c.recv(B, a1)
    c.recv(B, a0)
    c.recv(A, c.send(B))


def build_ratchet(seed: int) -> list:
    tests = []
    for i, (comment, kw, fn) in enumerate(RATCHET_SCENARIOS, start=1):
        c = RatchetCase(seed, i, comment, **kw)
        fn(c)
        tests.append(c.to_json())
    return tests


# =====================================================================================
# Sender Keys
# =====================================================================================
class SenderKeyCase:
    def __init__(self, seed: int, tid: int, comment: str, iteration: int = 0, note: str = ""):
        self.tid, self.comment, self.note = tid, comment, note
        d = Drbg(seed, f"sender-key/{tid}/setup")
        self.chain_key, self.signing_seed = d.bytes(32), d.bytes(32)
        self.iteration = iteration
        self.aux = Drbg(seed, f"sender-key/{tid}/aux")
        self.sender = SenderChain(self.chain_key, self.signing_seed)
        self.sender.advance_to(iteration)
        self.distribution = self.sender.distribution()
        assert len(self.distribution) == 101
        self.receiver = SenderKeyReceiver()
        self.receiver.process_distribution(self.distribution)
        self.events: list = []
        self.sends: list = []

    def pt(self, n: int | None = None) -> bytes:
        if n is None:
            n = 1 + self.aux.int_below(60)
        return self.aux.bytes(n)

    def msg(self, k: int) -> bytes:
        return self.sends[k][1]

    def send(self, plaintext: bytes | None = None) -> int:
        pt = self.pt() if plaintext is None else plaintext
        m = self.sender.encrypt(pt)
        self.sends.append((pt, m))
        self.events.append({"op": "send", "plaintext": pt.hex(), "message": m.hex()})
        return len(self.sends) - 1

    def _deliver(self, m: bytes, expect: str):
        before = self.receiver.state()
        res, pt = outcome(self.receiver.decrypt, m)
        if res == "ok":
            assert expect == "ok", f"sender-key test {self.tid}: expected {expect}, reference decrypted"
        else:
            assert expect in (res, "any"), f"sender-key test {self.tid}: expected {expect}, reference says {res}"
            assert self.receiver.state() == before, f"sender-key test {self.tid}: failed decrypt changed state"
        return pt

    def recv(self, k: int, expect: str = "ok") -> None:
        pt, m = self.sends[k]
        got = self._deliver(m, expect)
        if expect == "ok":
            assert got == pt
            self.events.append({"op": "recv", "send": k, "plaintext": pt.hex()})
        else:
            self.events.append({"op": "recv", "send": k, "error": expect})

    def raw(self, m: bytes, expect: str) -> None:
        assert expect != "ok"
        self._deliver(m, expect)
        self.events.append({"op": "recv", "message": m.hex(), "error": expect})

    def to_json(self) -> dict:
        t = {"id": self.tid, "comment": self.comment, "chain_key": self.chain_key.hex(),
             "signing_seed": self.signing_seed.hex(), "iteration": self.iteration,
             "distribution": self.distribution.hex()}
        if self.note:
            t["note"] = self.note
        t["events"] = self.events
        return t


def replay_sender_key(t: dict) -> None:
    h = bytes.fromhex
    sender = SenderChain(h(t["chain_key"]), h(t["signing_seed"]))
    sender.advance_to(t["iteration"])
    assert sender.distribution().hex() == t["distribution"], f"sender-key test {t['id']}: distribution"
    receiver = SenderKeyReceiver()
    receiver.process_distribution(h(t["distribution"]))
    sends = []
    for i, e in enumerate(t["events"]):
        where = f"sender-key test {t['id']} event {i}"
        if e["op"] == "send":
            m = sender.encrypt(h(e["plaintext"]))
            assert m.hex() == e["message"], where
            sends.append(m)
            continue
        m = sends[e["send"]] if "send" in e else h(e["message"])
        before = receiver.state()
        res, pt = outcome(receiver.decrypt, m)
        if "error" in e:
            assert res != "ok" and e["error"] in (res, "any"), f"{where}: {res}"
            assert receiver.state() == before, where
        else:
            assert res == "ok" and pt.hex() == e["plaintext"], f"{where}: {res}"


SK_SCENARIOS = []


def sk_scenario(comment: str, **kw):
    def deco(fn):
        SK_SCENARIOS.append((comment, kw, fn))
        return fn
    return deco


def resign(c: SenderKeyCase, signed: bytes, seed: bytes | None = None) -> bytes:
    return signed + ed25519_sign(seed or c.signing_seed, signed)


@sk_scenario("in-order delivery from iteration 0")
def _(c):
    for _ in range(4):
        c.recv(c.send())


@sk_scenario("in-order delivery starting at iteration 1000", iteration=1000)
def _(c):
    k = c.send()
    assert read_u32(c.msg(k), 33) == 1000
    c.recv(k)
    for _ in range(3):
        c.recv(c.send())


@sk_scenario("out-of-order delivery (3, 0, 2, 1, 4)")
def _(c):
    s = [c.send() for _ in range(5)]
    for i in (3, 0, 2, 1, 4):
        c.recv(s[i])


@sk_scenario("out-of-order delivery starting at iteration 1000 (reverse order)", iteration=1000)
def _(c):
    s = [c.send() for _ in range(6)]
    for i in reversed(range(6)):
        c.recv(s[i])


@sk_scenario("replay of a delivered message is duplicateMessage")
def _(c):
    a, b = c.send(), c.send()
    c.recv(a)
    c.recv(a, "duplicateMessage")
    c.recv(b)
    c.recv(a, "duplicateMessage")
    c.recv(b, "duplicateMessage")


@sk_scenario("replay of a message whose skipped key was used is duplicateMessage")
def _(c):
    s = [c.send() for _ in range(4)]
    c.recv(s[3])
    c.recv(s[1])
    c.recv(s[1], "duplicateMessage")
    c.recv(s[0])
    c.recv(s[2])
    c.recv(s[0], "duplicateMessage")
    c.recv(s[3], "duplicateMessage")


@sk_scenario("a message below the distribution's iteration was never held: duplicateMessage", iteration=1000)
def _(c):
    older = SenderChain(c.chain_key, c.signing_seed)
    older.advance_to(999)
    c.raw(older.encrypt(c.pt()), "duplicateMessage")
    c.recv(c.send())


@sk_scenario("message from a chain the receiver does not hold is unknownChain")
def _(c):
    other = SenderChain(c.aux.bytes(32), c.aux.bytes(32))
    c.raw(other.encrypt(c.pt()), "unknownChain")
    c.recv(c.send())


@sk_scenario("tampered chain_id is unknownChain")
def _(c):
    k = c.send()
    c.raw(flip(c.msg(k), 1, 0), "unknownChain")
    c.raw(flip(c.msg(k), 32, 7), "unknownChain")
    c.recv(k)


@sk_scenario("flipped signature bits are invalidSignature (R and S halves)")
def _(c):
    k = c.send()
    m = c.msg(k)
    c.raw(flip(m, len(m) - 64, 0), "invalidSignature")
    c.raw(flip(m, len(m) - 1, 3), "invalidSignature")
    c.raw(flip(m, len(m) - 20, 6), "invalidSignature")
    c.recv(k)


@sk_scenario("a valid signature by a different key is invalidSignature")
def _(c):
    k = c.send()
    m = c.msg(k)
    c.raw(resign(c, m[:-64], c.aux.bytes(32)), "invalidSignature")
    c.recv(k)


@sk_scenario("non-canonical signature (S + L) is invalidSignature")
def _(c):
    k = c.send()
    m = c.msg(k)
    s = int.from_bytes(m[-32:], "little") + L
    c.raw(m[:-32] + s.to_bytes(32, "little"), "invalidSignature")
    c.recv(k)


@sk_scenario("tampered ciphertext, tag or iteration without re-signing is invalidSignature")
def _(c):
    k = c.send()
    m = c.msg(k)
    c.raw(flip(m, 37, 0), "invalidSignature")           # first ciphertext byte
    c.raw(flip(m, len(m) - 65, 0), "invalidSignature")  # last tag byte
    c.raw(flip(m, 36, 0), "invalidSignature")           # iteration 0 -> 1
    c.recv(k)


@sk_scenario("tampered ciphertext/tag re-signed with the chain's key (authentic signature, AEAD fails) "
             "is invalidMessage")
def _(c):
    k = c.send()
    signed = c.msg(k)[:-64]
    c.raw(resign(c, flip(signed, 40, 1)), "invalidMessage")
    c.raw(resign(c, flip(signed, len(signed) - 1, 7)), "invalidMessage")
    c.recv(k)


@sk_scenario("re-signed message claiming another iteration (AAD/key mismatch) is invalidMessage; nothing "
             "is skipped", iteration=5)
def _(c):
    k = c.send()
    signed = c.msg(k)[:-64]
    c.raw(resign(c, replace(signed, 33, u32(8))), "invalidMessage")
    c.recv(k)
    c.recv(c.send())


@sk_scenario("authentic messages with invalid padding are invalidPadding; the chain does not advance")
def _(c):
    good = pad(b"group")
    c.raw(c.sender.forge(padded=b"\x00" + good[1:]), "invalidPadding")
    c.raw(c.sender.forge(padded=good[:-4] + u32(60)), "invalidPadding")
    c.recv(c.send(b"group"))


@sk_scenario("an authentic 117-byte message (minimum length: empty AEAD plaintext) is invalidPadding")
def _(c):
    m = c.sender.forge(padded=b"")
    assert len(m) == 117
    c.raw(m, "invalidPadding")
    c.recv(c.send())


@sk_scenario("wrong type bytes are unsupportedVersion (0x10 distribution type, 0x12, 0x01, 0xff)")
def _(c):
    k = c.send()
    m = c.msg(k)
    for t in (b"\x10", b"\x12", b"\x01", b"\xff"):
        c.raw(replace(m, 0, t), "unsupportedVersion")
    c.raw(c.distribution, "unsupportedVersion")
    c.raw(b"\x12" + m[1:30], "unsupportedVersion")   # SPEC §5: type byte checked before length
    c.recv(k)


@sk_scenario("short messages are invalidMessage (116 bytes, 37 bytes, 1 byte)")
def _(c):
    k = c.send()
    m = c.msg(k)
    c.raw(m[:116], "invalidMessage")
    c.raw(m[:37], "invalidMessage")
    c.raw(m[:1], "invalidMessage")
    c.raw(m[:-1], "invalidSignature")     # long enough; the signature no longer verifies
    c.recv(k)


@sk_scenario("empty plaintext and a 5000-byte plaintext (8192 bucket)")
def _(c):
    c.recv(c.send(b""))
    k = c.send(c.pt(5000))
    assert len(c.msg(k)) == 37 + 8192 + 16 + 64
    c.recv(k)


@sk_scenario("padding bucket edges: 59 and 60 byte plaintexts", iteration=3)
def _(c):
    c.recv(c.send(c.pt(59)))
    c.recv(c.send(c.pt(60)))


@sk_scenario("transactional: a failed message (bad signature; authentic signature but bad tag) at a later iteration "
             "skips nothing; genuine messages then decrypt")
def _(c):
    s = [c.send() for _ in range(4)]
    m = c.msg(s[3])
    c.raw(flip(m, len(m) - 5, 0), "invalidSignature")
    c.raw(resign(c, flip(m[:-64], 50, 0)), "invalidMessage")
    c.recv(s[3])
    for i in range(3):
        c.recv(s[i])
    c.recv(s[3], "duplicateMessage")


@sk_scenario("gaps and out-of-order delivery from iteration 1000", iteration=1000)
def _(c):
    s = [c.send(b"") for _ in range(20)]
    c.recv(s[10])
    c.recv(s[19])
    c.recv(s[0])
    c.recv(s[15])
    c.recv(s[10], "duplicateMessage")


@sk_scenario("limits: exactly 256 ahead decrypts, 257 ahead is tooManySkippedMessages; more than 2000 "
             "skipped keys evict the oldest (the evicted one is then duplicateMessage)",
             note="sends are 2009 empty plaintexts; the receiver takes iterations 256, 513, ..., 1798 "
                  "(7 x 256 skipped keys), then 2008 (209 more: 2001 stored, iteration 0 evicted)")
def _(c):
    s = [c.send(b"") for _ in range(2009)]
    c.recv(s[257], "tooManySkippedMessages")
    c.recv(s[256])
    for j in range(2, 8):
        c.recv(s[256 + 257 * (j - 1)])   # 513, 770, ..., 1798: 256 ahead each time
    c.recv(s[2008])                     # 209 ahead: 2001 stored, iteration 0 evicted
    c.recv(s[0], "duplicateMessage")
    c.recv(s[1])
    c.recv(s[2007])
    c.recv(s[1000])
    c.recv(s[257])
    c.recv(s[257], "duplicateMessage")


@sk_scenario("large start iteration 65536, out-of-order delivery and a replay", iteration=65536)
def _(c):
    s = [c.send() for _ in range(5)]
    for i in (4, 2, 0, 3, 1):
        c.recv(s[i])
    c.recv(s[2], "duplicateMessage")


@sk_scenario("authentic (re-signed) headers: 257 ahead and 2^32-1 are tooManySkippedMessages and a stale "
             "iteration is duplicateMessage, all decided before AEAD work")
def _(c):
    a, b = c.send(), c.send()
    c.recv(a)
    signed = c.msg(b)[:-64]
    c.raw(resign(c, replace(signed, 33, u32(1 + 257))), "tooManySkippedMessages")
    c.raw(resign(c, replace(signed, 33, u32(0xFFFFFFFF))), "tooManySkippedMessages")
    c.raw(resign(c, replace(signed, 33, u32(0))), "duplicateMessage")
    c.raw(resign(c, flip(signed, 45, 0)), "invalidMessage")
    c.recv(b)


@sk_scenario("a signature taken from another message of the same chain is invalidSignature")
def _(c):
    a, b = c.send(), c.send()
    c.raw(c.msg(b)[:-64] + c.msg(a)[-64:], "invalidSignature")
    c.raw(c.msg(a)[:-64] + c.msg(b)[-64:], "invalidSignature")
    c.recv(b)
    c.recv(a)


@sk_scenario("30 messages delivered in a random order, each once, then five of them replayed (duplicateMessage)",
             iteration=7)
def _(c):
    s = [c.send(b"" if i % 5 == 0 else None) for i in range(30)]
    order = list(range(30))
    for i in range(29, 0, -1):
        j = c.aux.int_below(i + 1)
        order[i], order[j] = order[j], order[i]
    for i in order:
        c.recv(s[i])
    for i in order[:5]:
        c.recv(s[i], "duplicateMessage")


@sk_scenario("interleaved sends and deliveries: the receiver keeps up, falls behind, catches up")
def _(c):
    pending = []
    for _ in range(12):
        pending.append(c.send())
        if c.aux.int_below(2):
            c.recv(pending.pop(c.aux.int_below(len(pending))))
    while pending:
        c.recv(pending.pop(c.aux.int_below(len(pending))))


@sk_scenario("a message from another chain with the same signing key is still unknownChain", iteration=2)
def _(c):
    other = SenderChain(c.aux.bytes(32), c.signing_seed)
    c.raw(other.encrypt(c.pt()), "unknownChain")
    c.recv(c.send())


def build_sender_key(seed: int) -> list:
    tests = []
    for i, (comment, kw, fn) in enumerate(SK_SCENARIOS, start=1):
        c = SenderKeyCase(seed, i, comment, **kw)
        fn(c)
        tests.append(c.to_json())
    return tests


# =====================================================================================
def write_suite_lines(path: str, suite: str, source: str, tests: list) -> None:
    """The §8 protocol-file object, like spec_primitives.write_suite, but with one test header
    and one event per line (the hex dominates; the indentation of write_suite would push the
    files past 1 MB)."""
    import json
    out = ["{", ' "schema": "sessionkit-vectors/1",', f' "suite": {json.dumps(suite)},',
           f' "source": {json.dumps(source)},', ' "tests": [']
    for i, t in enumerate(tests):
        head = json.dumps({k: v for k, v in t.items() if k != "events"})
        out.append("  " + head[:-1] + ', "events": [')
        ev = t["events"]
        out.extend("   " + json.dumps(e) + ("," if j + 1 < len(ev) else "") for j, e in enumerate(ev))
        out.append("  ]}" + ("," if i + 1 < len(tests) else ""))
    out += [" ]", "}"]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    with open(path) as f:
        assert json.load(f) == {"schema": "sessionkit-vectors/1", "suite": suite, "source": source,
                                "tests": tests}


def main(seed: int = 1, out_dir: str = "TestVectors/protocol") -> None:
    os.makedirs(out_dir, exist_ok=True)
    ratchet = build_ratchet(seed)
    for t in ratchet:
        replay_ratchet(t)
    sender_key = build_sender_key(seed)
    for t in sender_key:
        replay_sender_key(t)
    write_suite_lines(os.path.join(out_dir, "ratchet.json"), "ratchet", SOURCE_RATCHET + f", seed {seed}",
                      ratchet)
    write_suite_lines(os.path.join(out_dir, "sender_key.json"), "sender-key",
                      SOURCE_SENDER_KEY + f", seed {seed}", sender_key)
    print(f"ratchet.json: {len(ratchet)} tests; sender_key.json: {len(sender_key)} tests")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="TestVectors/protocol")
    args = ap.parse_args()
    main(args.seed, args.out)
