"""Generate the `ratchet` and `sender-key` suites (SPEC.md version 2, §3-§5, §8):
TestVectors/protocol/ratchet*.json and sender_key*.json.

    python3 generate_sessions.py [--seed N] [--out DIR]

The output is a pure function of the seed (all randomness comes from spec_primitives.Drbg).
Every test is built by driving the independent references in ref_ratchet.py /
ref_sender_key.py; each expected outcome written below is asserted against the reference
while generating, every error event is checked to leave the receiver's state unchanged,
every success on a previous session is checked to be one SPEC §3 lets a vector rely on, and
afterwards every test is replayed from its JSON alone through fresh reference parties
(self-consistency pass); the ratchet events are also checked against a restatement of SPEC
§4/§9's message-layer checks that does not use ref_ratchet (check_message_layer). A suite is
split over several files (ids continuing) to keep each file under 1 MB.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ref_mlkem  # noqa: E402
import ref_x3dh as rx  # noqa: E402
import spec_primitives as sp  # noqa: E402
from spec_primitives import (L, P, SCHEMA, Drbg, SpecError, address_json, ed25519_pub,  # noqa: E402
                             ed25519_sign, encode_address_json, pad, random_address, read_u32, u32, x25519_pub)
from ref_ratchet import (DEFAULT_MAX_SKIP, DEFAULT_MAX_STORED, MAX_PREVIOUS, Party,  # noqa: E402
                         prefix_len)
from ref_sender_key import SenderChain, SenderKeyReceiver, sign_message  # noqa: E402
from spec_primitives import encode_group  # noqa: E402

A, B = "alice", "bob"
KEY_POOL = 400
SOURCE_RATCHET = ("TestVectors/generator/generate_sessions.py (independent Python reference "
                  "ref_ratchet.py, SPEC.md v2 §3-§4)")
SOURCE_SENDER_KEY = ("TestVectors/generator/generate_sessions.py (independent Python reference "
                     "ref_sender_key.py, SPEC.md v2 §5)")
KEYS_NOTE = "ratchet_keys lists exactly the keys each party draws in this scenario, in order"
FILE_BUDGET = 900_000


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


def torsion_rewrite(u_bytes: bytes) -> bytes:
    """u -> 1/u mod p: the same point plus the 2-torsion point (0, 0), so X25519 with a clamped
    (multiple of 8) scalar gives the same output."""
    u = int.from_bytes(u_bytes, "little")
    return pow(u, P - 2, P).to_bytes(32, "little")


# =====================================================================================
# Ratchet
# =====================================================================================
ADDRESS_PAIRS = [
    (address_json("alice", 1), address_json("bob", 1), None),
    (address_json("carol", 1), address_json("carol", 2), "two devices of one user: same uid, devices 1 and 2"),
    (address_json("élodie", 7), address_json("zoë", 3), "non-ASCII uids"),
    (address_json("3f2504e0-4f89-11d3-9a0c-0305e82c3301", 0),
     address_json("7d444840-9dc0-11d1-b245-5ffdce74fad2", 0xFFFFFFFF), "UUID uids, devices 0 and 0xffffffff"),
    (address_json("😀 user", 12), address_json("用户", 99), "emoji and CJK uids"),
]


def check_trace(where: str, trace: list, ok: bool) -> None:
    """A success on a previous session must be one SPEC §3 lets a vector rely on: on a ratchet
    key that session knows, or one DH step in the most recent previous session with
    header.pn equal to its receiving counter."""
    for t in trace:
        if t[0] == "decrypted" and t[1] >= 1:
            _, i, knows, pn_ok = t
            assert knows or (i == 1 and pn_ok), f"{where}: success relies on a search SPEC §3 lets an " \
                                                f"implementation bound ({t})"


class RatchetCase:
    def __init__(self, seed: int, tid: int, comment: str, *, opk: bool = True, kem: bool = False,
                 max_skip: int = DEFAULT_MAX_SKIP, max_stored: int = DEFAULT_MAX_STORED, note: str = "",
                 addresses: int | None = None, alice_address: dict | None = None, label: str = "ratchet"):
        """label: the Drbg label prefix; its streams are {label}/{tid}/setup, .../alice-keys,
        .../bob-keys and .../aux (the SPEC §9 tests have their own, ratchet/registration-id)."""
        self.tid, self.comment, self.note = tid, comment, note
        d = Drbg(seed, f"{label}/{tid}/setup")
        self.alice_seed, self.ek_sk = d.bytes(32), d.bytes(32)
        self.bob_seed, self.spk_sk = d.bytes(32), d.bytes(32)
        self.spk_id = read_u32(d.bytes(4), 0)
        self.opk_sk = d.bytes(32) if opk else None
        self.opk_id = read_u32(d.bytes(4), 0) if opk else None
        self.kem_seed = d.bytes(64) if kem else None
        self.kem_id = read_u32(d.bytes(4), 0) if kem else None
        kem_m = d.bytes(32) if kem else None
        k = tid % (len(ADDRESS_PAIRS) + 1) if addresses is None else addresses
        if k < len(ADDRESS_PAIRS):
            self.alice_address, self.bob_address, anote = ADDRESS_PAIRS[k]
        else:
            self.alice_address, self.bob_address, anote = random_address(d), random_address(d), None
        if alice_address is not None:
            self.alice_address = alice_address
        if anote:
            self.note = (self.note + "; " if self.note else "") + f"addresses: {anote}"
        self.a_addr, self.b_addr = encode_address_json(self.alice_address), encode_address_json(self.bob_address)
        assert self.a_addr != self.b_addr
        self.max_skip, self.max_stored = max_skip, max_stored
        self.bundle = rx.make_bundle(self.bob_seed, self.spk_id, self.spk_sk, self.opk_id, self.opk_sk, self.kem_id,
                                     self.kem_seed)
        self.encaps = None
        if kem:
            self.encaps = rx.encapsulate(self.bundle, kem_m)
            assert ref_mlkem.lib_decaps(self.kem_seed, self.encaps[0]) == self.encaps[1]
        ka, kb = Drbg(seed, f"{label}/{tid}/alice-keys"), Drbg(seed, f"{label}/{tid}/bob-keys")
        self.alice_pool = [ka.bytes(32) for _ in range(KEY_POOL)]
        self.bob_pool = [kb.bytes(32) for _ in range(KEY_POOL)]
        self.aux = Drbg(seed, f"{label}/{tid}/aux")
        self.parties = make_parties(self.alice_seed, self.a_addr, self.ek_sk, self.encaps, self.alice_pool,
                                    self.bob_seed, self.b_addr, self.spk_sk, self.spk_id, self.opk_sk, self.opk_id,
                                    self.kem_seed, self.kem_id, self.bob_pool, max_skip, max_stored)
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
    def plen(self) -> int:
        """Length of Alice's prekey prefix (type byte included)."""
        return prefix_len((1 if self.opk_sk is not None else 0) | (2 if self.kem_seed is not None else 0))

    def addr(self, who: str) -> bytes:
        return self.a_addr if who == A else self.b_addr

    def other(self, who: str) -> str:
        return B if who == A else A

    def pt(self, n: int | None = None) -> bytes:
        if n is None:
            n = 1 + self.aux.int_below(60)
        return self.aux.bytes(n)

    def rand(self, n: int) -> bytes:
        return self.aux.bytes(n)

    def msg(self, k: int) -> bytes:
        return self.sends[k][2]

    def send(self, frm: str, plaintext: bytes | None = None, content_type: int = 1) -> int:
        """content_type (§2) other than 1 is written into the event as `content_type`."""
        pt = self.pt() if plaintext is None else plaintext
        m = self.parties[frm].encrypt(self.addr(self.other(frm)), pt, content_type)
        self.sends.append((frm, pt, m))
        e = {"op": "send", "from": frm}
        if content_type != 1:
            e["content_type"] = content_type
        e.update({"plaintext": pt.hex(), "message": m.hex()})
        self.events.append(e)
        return len(self.sends) - 1

    def forge(self, frm: str, **kw) -> bytes:
        return self.parties[frm].forge(self.addr(self.other(frm)), **kw)

    def _deliver(self, to: str, m: bytes, expect: str, from_address: dict | None = None, content_type: int = 1):
        party = self.parties[to]
        peer = encode_address_json(from_address) if from_address is not None else self.addr(self.other(to))
        before = party.state()
        (res, pt), trace = party.decide(peer, m, content_type)
        where = f"ratchet test {self.tid}"
        if res == "ok":
            assert expect == "ok", f"{where}: expected {expect}, reference decrypted"
            check_trace(where, trace, True)
            got = party.decrypt(peer, m, content_type)
            assert got == pt
        else:
            assert expect in (res, "any"), f"{where}: expected {expect}, reference says {res} ({trace})"
            assert party.state() == before, f"{where}: failed decrypt changed state"
        return pt

    def recv(self, to: str, k: int, expect: str = "ok", from_address: dict | None = None,
             content_type: int = 1) -> None:
        """content_type: the type the receiver expects (§2), written as `content_type` unless 1."""
        frm, pt, m = self.sends[k]
        got = self._deliver(to, m, expect, from_address, content_type)
        ct = {"content_type": content_type} if content_type != 1 else {}
        if expect == "ok":
            assert from_address is None
            assert got == pt, f"test {self.tid}: wrong plaintext for send {k}"
            self.events.append({"op": "recv", "to": to, "send": k, **ct, "plaintext": pt.hex()})
        else:
            e = {"op": "recv", "to": to, "send": k, **ct, "error": expect}
            if from_address is not None:
                e["from_address"] = from_address
            self.events.append(e)

    def raw(self, to: str, m: bytes, expect: str, from_address: dict | None = None, *,
            sharp: str | None = None) -> None:
        """sharp: a check of ref_ratchet's `lenient` set; asserts that the receiver without that one
        check would accept m (decrypt it), so only the rule the event tests can refuse it."""
        assert expect != "ok"
        if sharp is not None:
            self.assert_accepted_without(to, m, sharp)
        self._deliver(to, m, expect, from_address)
        e = {"op": "recv", "to": to, "message": m.hex(), "error": expect}
        if from_address is not None:
            e["from_address"] = from_address
        self.events.append(e)

    def assert_accepted_without(self, to: str, m: bytes, check: str) -> None:
        lenient = copy.deepcopy(self.parties[to])
        lenient.lenient = frozenset({check})
        (res, _), trace = lenient.decide(self.addr(self.other(to)), m)
        assert res == "ok", f"ratchet test {self.tid}: without {check} the message still fails ({res}, {trace})"

    def raw_ok(self, to: str, m: bytes, plaintext: bytes) -> None:
        got = self._deliver(to, m, "ok")
        assert got == plaintext
        self.events.append({"op": "recv", "to": to, "message": m.hex(), "plaintext": plaintext.hex()})

    def handshake(self) -> None:
        """a prekey message to Bob and a reply to Alice: afterwards Alice sends 0x21 messages."""
        a = self.send(A)
        self.recv(B, a)
        b = self.send(B)
        self.recv(A, b)

    def second_initiator(self, *, identity_seed: bytes | None = None, address: bytes | None = None,
                         use_opk: bool = False, use_kem: bool = False, bundle: rx.Bundle | None = None,
                         peer: bytes | None = None, check: bool = True, kem_seed: bytes | None = None,
                         registration_id: int | None = None, extra_flags: int = 0) -> Party:
        """Another initiator instance (new EK_A, own ratchet keys, none of them in the vector),
        by default Alice's identity and address, built from Bob's bundle (without its OPK unless
        use_opk, without its KEM prekey unless use_kem). registration_id: its own id in P (SPEC §9,
        flags bit 2; not range-checked, so that out-of-range ids can be forged with a consistent
        SK); extra_flags: reserved flag bits set in P (forgeries)."""
        if bundle is None:
            b = self.bundle
            bundle = rx.Bundle(ik=b.ik, spk_id=b.spk_id, spk=b.spk, spk_sig=b.spk_sig,
                               opk_id=b.opk_id if use_opk else None, opk=b.opk if use_opk else None,
                               kem_id=b.kem_id if use_kem else None, kem_ek=b.kem_ek if use_kem else None,
                               kem_sig=b.kem_sig if use_kem else None)
            check = check and (use_kem or b.kem_ek is None)
        encaps = None
        if bundle.kem_ek is not None:
            encaps = rx.encapsulate(bundle, self.rand(32))
            if kem_seed is not None or bundle.kem_ek == self.bundle.kem_ek:
                assert ref_mlkem.lib_decaps(kem_seed or self.kem_seed, encaps[0]) == encaps[1]
        return Party.initiator(identity_seed or self.alice_seed, address or self.a_addr, self.rand(32),
                               [self.rand(32) for _ in range(4)], bundle=bundle, peer=peer or self.b_addr,
                               encapsulation=encaps, check=check, name="other", registration_id=registration_id,
                               extra_flags=extra_flags)

    def to_json(self) -> dict:
        a_used, b_used = self.alice.keys_used, self.bob.keys_used
        enc = None
        if self.encaps is not None:
            enc = {"ciphertext": self.encaps[0].hex(), "shared_secret": self.encaps[1].hex()}
        t = {
            "id": self.tid,
            "comment": self.comment,
            "alice": {"identity_seed": self.alice_seed.hex(), "address": self.alice_address,
                      "x3dh_ephemeral_sk": self.ek_sk.hex(), "kem_encapsulation": enc,
                      "ratchet_keys": [k.hex() for k in self.alice_pool[:a_used]]},
            "bob": {"identity_seed": self.bob_seed.hex(), "address": self.bob_address, "spk_sk": self.spk_sk.hex(),
                    "spk_id": self.spk_id, "opk_sk": self.opk_sk.hex() if self.opk_sk is not None else None,
                    "opk_id": self.opk_id, "kem_seed": self.kem_seed.hex() if self.kem_seed is not None else None,
                    "kem_id": self.kem_id, "ratchet_keys": [k.hex() for k in self.bob_pool[:b_used]]},
            "max_skip": self.max_skip,
            "max_stored": self.max_stored,
            "note": KEYS_NOTE + (f"; {self.note}" if self.note else ""),
            "events": self.events,
        }
        return t


def make_parties(alice_seed, a_addr, ek_sk, encaps, alice_keys, bob_seed, b_addr, spk_sk, spk_id, opk_sk, opk_id,
                 kem_seed, kem_id, bob_keys, max_skip, max_stored) -> dict:
    bundle = rx.make_bundle(bob_seed, spk_id, spk_sk, opk_id, opk_sk, kem_id, kem_seed)
    alice = Party.initiator(alice_seed, a_addr, ek_sk, alice_keys, bundle=bundle, peer=b_addr, encapsulation=encaps,
                            max_skip=max_skip, max_stored=max_stored)
    bob = Party.responder(bob_seed, b_addr, bob_keys, spk_id=spk_id, spk_sk=spk_sk,
                          kem_bit=1 if kem_seed is not None else 0,
                          opks={opk_id: opk_sk} if opk_sk is not None else {},
                          kems={kem_id: kem_seed} if kem_seed is not None else {},
                          max_skip=max_skip, max_stored=max_stored)
    return {A: alice, B: bob}


def replay_ratchet(t: dict) -> None:
    """Self-consistency: run one JSON test through fresh reference parties."""
    h = bytes.fromhex
    a, b = t["alice"], t["bob"]
    a_addr, b_addr = encode_address_json(a["address"]), encode_address_json(b["address"])
    enc = a["kem_encapsulation"]
    encaps = (h(enc["ciphertext"]), h(enc["shared_secret"])) if enc is not None else None
    assert (enc is None) == (b["kem_seed"] is None) == (b["kem_id"] is None)
    assert (b["opk_sk"] is None) == (b["opk_id"] is None)
    parties = make_parties(h(a["identity_seed"]), a_addr, h(a["x3dh_ephemeral_sk"]), encaps,
                           [h(k) for k in a["ratchet_keys"]], h(b["identity_seed"]), b_addr, h(b["spk_sk"]),
                           b["spk_id"], h(b["opk_sk"]) if b["opk_sk"] is not None else None, b["opk_id"],
                           h(b["kem_seed"]) if b["kem_seed"] is not None else None, b["kem_id"],
                           [h(k) for k in b["ratchet_keys"]], t["max_skip"], t.get("max_stored", 2000))
    addrs = {A: a_addr, B: b_addr}
    sends = []
    for i, e in enumerate(t["events"]):
        where = f"ratchet test {t['id']} event {i}"
        if e["op"] == "send":
            m = parties[e["from"]].encrypt(addrs[B if e["from"] == A else A], h(e["plaintext"]), e.get("content_type", 1))
            assert m.hex() == e["message"], where
            sends.append(m)
            continue
        assert e["op"] == "recv"
        m = sends[e["send"]] if "send" in e else h(e["message"])
        party = parties[e["to"]]
        peer = addrs[B if e["to"] == A else A]
        if "from_address" in e:
            assert "error" in e
            peer = encode_address_json(e["from_address"])
        before = party.state()
        ct = e.get("content_type", 1)
        (res, pt), trace = party.decide(peer, m, ct)
        if "error" in e:
            assert res != "ok" and (e["error"] == "any" or e["error"] == res), f"{where}: {res}"
        else:
            assert res == "ok" and pt.hex() == e["plaintext"], f"{where}: {res}"
            check_trace(where, trace, True)
            party.decrypt(peer, m, ct)
        if "error" in e:
            assert party.state() == before, where
    for name in (A, B):
        assert parties[name].keys_used == len(t[name]["ratchet_keys"]), f"ratchet test {t['id']}: key count"


# ------------------------------------------------------------------ ratchet scenarios
RATCHET_SCENARIOS = []


def scenario(comment: str, **kw):
    def deco(fn):
        RATCHET_SCENARIOS.append((comment, kw, fn))
        return fn
    return deco


# ---- basic flows in the four bundle shapes
@scenario("basic exchange with a one-time prekey, no KEM prekey: prekey message (flags 0x01), reply, then a "
          "0x21 message each way")
def _(c: RatchetCase):
    a0 = c.send(A)
    assert c.msg(a0)[0] == 0x22 and c.msg(a0)[69] == 0x01 and len(c.msg(a0)) == 74 + 41 + 64 + 16
    c.recv(B, a0)
    b0 = c.send(B)
    assert c.msg(b0)[0] == 0x21
    c.recv(A, b0)
    a1 = c.send(A)
    assert c.msg(a1)[0] == 0x21
    c.recv(B, a1)
    c.recv(A, c.send(B))


@scenario("basic exchange without one-time prekey or KEM prekey (flags 0x00, 70-byte prefix)", opk=False)
def _(c: RatchetCase):
    a0 = c.send(A)
    assert c.msg(a0)[69] == 0x00 and len(c.msg(a0)) == 70 + 41 + 64 + 16
    c.recv(B, a0)
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("basic exchange with a one-time prekey and a KEM prekey (flags 0x03, 1166-byte prefix)", kem=True)
def _(c: RatchetCase):
    a0 = c.send(A)
    assert c.msg(a0)[69] == 0x03 and len(c.msg(a0)) == 70 + 4 + 1092 + 41 + 64 + 16
    c.recv(B, a0)
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("basic exchange with a KEM prekey and no one-time prekey (flags 0x02, 1162-byte prefix)", opk=False, kem=True)
def _(c: RatchetCase):
    a0 = c.send(A)
    assert c.msg(a0)[69] == 0x02 and len(c.msg(a0)) == 70 + 1092 + 41 + 64 + 16
    c.recv(B, a0)
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("several messages per chain, all delivered in order", kem=True)
def _(c: RatchetCase):
    for _ in range(3):
        c.recv(B, c.send(A))
    for _ in range(3):
        c.recv(A, c.send(B))
    for _ in range(2):
        c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("Alice keeps sending prekey messages until she has decrypted a reply, then switches to 0x21; the "
          "later prekey messages name the used OPK and KEM prekey and decrypt through the session of their EK_A",
          kem=True)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.recv(B, a0)
    b0 = c.send(B)
    a1 = c.send(A)
    assert c.msg(a1)[0] == 0x22
    c.recv(B, a1)
    c.recv(A, b0)
    a2 = c.send(A)
    assert c.msg(a2)[0] == 0x21
    c.recv(B, a2)


@scenario("out-of-order delivery within one of Alice's chains (4, 2, 1, 3)")
def _(c: RatchetCase):
    c.handshake()
    s = [c.send(A) for _ in range(4)]
    for i in (3, 1, 0, 2):
        c.recv(B, s[i])
    c.recv(A, c.send(B))


@scenario("out-of-order delivery of Bob's first chain to Alice, who has no receiving chain yet", opk=False, kem=True)
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


@scenario("prekey messages out of order: Bob receives Alice's second prekey message first (OPK and KEM prekey "
          "used once)", kem=True)
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


@scenario("early prekey messages arrive after Bob replied and Alice already switched to 0x21 messages")
def _(c: RatchetCase):
    a0, a1, a2 = c.send(A), c.send(A), c.send(A)
    c.recv(B, a2)
    b0 = c.send(B)
    c.recv(A, b0)
    a3 = c.send(A)
    assert c.msg(a3)[0] == 0x21
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


@scenario("random conversation 4 on a session with a KEM prekey", kem=True, opk=False)
def _(c: RatchetCase):
    random_conversation(c, 50)


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


# ---- replays
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


@scenario("replayed prekey message: duplicateMessage while its chain is current (the session of its EK_A "
          "decides), some error once the chain is gone", kem=True)
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


# ---- tampering
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


@scenario("tampered messages to Alice (0x21 from Bob): header, ciphertext and tag bits")
def _(c: RatchetCase):
    c.handshake()
    b1 = c.send(B)
    m = c.msg(b1)
    c.raw(A, flip(m, 2, 4), "invalidMessage")
    c.raw(A, flip(m, 40, 1), "invalidMessage")     # N 1 -> 3
    c.raw(A, flip(m, 60, 2), "invalidMessage")
    c.raw(A, flip(m, len(m) - 3, 1), "invalidMessage")
    c.recv(A, b1)


@scenario("tampered prekey messages: bits of the ciphertext, the tag and the inner header (fresh Bob and with "
          "a session); no session is created and nothing consumed", kem=True)
def _(c: RatchetCase):
    a0, a1 = c.send(A), c.send(A)
    pl = c.plen
    for i in (pl + 41, pl + 70, len(c.msg(a0)) - 1, pl + 36, pl + 40):
        c.raw(B, flip(c.msg(a0), i, 0), "invalidMessage")
    c.recv(B, a0)
    c.raw(B, flip(c.msg(a1), len(c.msg(a1)) - 7, 2), "invalidMessage")
    c.recv(B, a1)
    c.recv(A, c.send(B))


@scenario("header.dh with bit 255 set is non-canonical: invalidKey (0x21 messages both ways)")
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


@scenario("truncated 0x21 messages are invalidMessage (56 bytes, 41 bytes, 1 byte; a cut tag fails the AEAD)")
def _(c: RatchetCase):
    c.handshake()
    a1 = c.send(A)
    m = c.msg(a1)
    c.raw(B, m[:56], "invalidMessage")
    c.raw(B, m[:41], "invalidMessage")
    c.raw(B, m[:1], "invalidMessage")
    c.raw(B, m[:-1], "invalidMessage")       # long enough, but the tag is cut: AEAD fails
    c.raw(B, b"", "invalidMessage")
    c.recv(B, a1)


# ---- padding
@scenario("an authentic 57-byte message (minimum length: empty AEAD plaintext) is invalidPadding")
def _(c: RatchetCase):
    c.handshake()
    m = c.forge(A, padded=b"")
    assert len(m) == 57
    c.raw(B, m, "invalidPadding")
    c.recv(B, c.send(A))


@scenario("authentic messages whose padded plaintext is invalid are invalidPadding; state unchanged")
def _(c: RatchetCase):
    c.handshake()
    good = pad(b"hello")
    c.raw(B, c.forge(A, padded=b"\x00" + good[1:]), "invalidPadding")          # first byte not 0x01
    c.raw(B, c.forge(A, padded=good[:-4] + u32(len(good) - 4)), "invalidPadding")  # L > length - 5
    c.raw(B, c.forge(A, padded=b"\x01\x00\x00\x00"), "invalidPadding")           # shorter than 5
    c.raw(A, c.forge(B, padded=good[:-4] + u32(0xFFFFFFFF)), "invalidPadding")
    c.recv(B, c.send(A, b"hello"))
    c.recv(A, c.send(B))


@scenario("authentic prekey message with invalid padding: invalidPadding, no session created, OPK and KEM "
          "prekey kept", kem=True)
def _(c: RatchetCase):
    c.raw(B, c.forge(A, padded=b"\x02" + bytes(59) + u32(58)), "invalidPadding")
    a0 = c.send(A)
    c.raw(B, c.forge(A, padded=b""), "invalidPadding")
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


# ---- type bytes, flags, lengths
@scenario("type bytes of version 1 (0x01, 0x02, 0x10, 0x11, 0x20) and other unknown ones are unsupportedVersion "
          "on otherwise valid messages (also on a short one)")
def _(c: RatchetCase):
    a0 = c.send(A)
    for t in (0x01, 0x02, 0x10, 0x11, 0x20, 0x23, 0x26, 0xFF):
        c.raw(B, replace(c.msg(a0), 0, bytes([t])), "unsupportedVersion")
    c.recv(B, a0)
    b0 = c.send(B)
    for t in (0x01, 0x02, 0x00, 0x24, 0x25):
        c.raw(A, replace(c.msg(b0), 0, bytes([t])), "unsupportedVersion")
    c.raw(A, b"\x01" + c.msg(b0)[1:20], "unsupportedVersion")     # SPEC §4: type byte is checked first
    c.recv(A, b0)
    a1 = c.send(A)
    c.raw(B, replace(c.msg(a1), 0, b"\x01"), "unsupportedVersion")
    c.raw(B, replace(c.msg(a1), 0, b"\x02"), "unsupportedVersion")
    c.recv(B, a1)


@scenario("a prekey message whose inner message has another type byte (0x01 of version 1, 0x22, 0x00) is "
          "unsupportedVersion, fresh Bob and with a session", kem=True, opk=False)
def _(c: RatchetCase):
    a0, a1 = c.send(A), c.send(A)
    for t in (0x01, 0x22, 0x00):
        c.raw(B, replace(c.msg(a0), c.plen, bytes([t])), "unsupportedVersion")
    c.recv(B, a0)
    c.raw(B, replace(c.msg(a1), c.plen, b"\x01"), "unsupportedVersion")
    c.recv(B, a1)


@scenario("prekey flags byte with a bit outside 0-2 is invalidMessage (fresh Bob and with a session); flags "
          "0x05 sets bit 2 (SPEC §9), which is legal: the four bytes after the OPK id are read as a registration "
          "id (0x213102be, in range) and the inner message then starts with 0xde, unsupportedVersion",
          note="changed by SPEC §9: event 1 (flags 0x05) expected invalidMessage before flag bit 2 existed")
def _(c: RatchetCase):
    a0 = c.send(A)
    for fl in (0x05, 0x09, 0x81, 0xFD):       # bit 0 kept, so the lengths still fit
        m = replace(c.msg(a0), 69, bytes([fl]))
        if fl == 0x05:                        # §9: the id is the inner message's first four bytes
            assert rx.registration_id_is_valid(read_u32(m, 74)) and m[78] != 0x21
            c.raw(B, m, "unsupportedVersion")
        else:
            c.raw(B, m, "invalidMessage")
    c.recv(B, a0)
    a1 = c.send(A)
    c.raw(B, replace(c.msg(a1), 69, b"\x41"), "invalidMessage")
    c.recv(B, a1)


@scenario("prekey flags claiming a part the message lacks: the lengths no longer fit, invalidMessage", opk=False)
def _(c: RatchetCase):
    a0 = c.send(A, c.pt(20))
    m = c.msg(a0)
    c.raw(B, replace(m, 69, b"\x02"), "invalidMessage")     # a KEM part of 1092 bytes would not fit
    c.raw(B, replace(m, 69, b"\x03"), "invalidMessage")
    c.recv(B, a0)


@scenario("truncated prekey messages with an OPK are invalidMessage (69 and 70 bytes; 74 + 56 bytes)")
def _(c: RatchetCase):
    a0 = c.send(A)
    m = c.msg(a0)
    c.raw(B, m[:69], "invalidMessage")
    c.raw(B, m[:70], "invalidMessage")
    c.raw(B, m[:74 + 56], "invalidMessage")
    c.raw(B, m[:1], "invalidMessage")
    c.recv(B, a0)


@scenario("truncated prekey messages with a KEM prekey are invalidMessage (prefix cut inside CT; 1166 + 56 bytes)",
          kem=True)
def _(c: RatchetCase):
    a0 = c.send(A)
    m = c.msg(a0)
    c.raw(B, m[:74 + 500], "invalidMessage")
    c.raw(B, m[:c.plen + 56], "invalidMessage")
    c.raw(B, m[:c.plen], "invalidMessage")
    c.recv(B, a0)


@scenario("truncated prekey message without OPK (70 + 56 bytes) is invalidMessage", opk=False)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, c.msg(a0)[:70 + 56], "invalidMessage")
    c.recv(B, a0)


# ---- keys in prekey messages
@scenario("prekey message with non-canonical EK_A (bit 255 set; value >= p) is invalidKey")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, flip(c.msg(a0), 64, 7), "invalidKey")
    c.raw(B, replace(c.msg(a0), 33, (P + 5).to_bytes(32, "little")), "invalidKey")
    c.recv(B, a0)


@scenario("prekey message whose inner header.dh is non-canonical is invalidKey", kem=True)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, flip(c.msg(a0), c.plen + 32, 7), "invalidKey")
    c.recv(B, a0)
    a1 = c.send(A)
    c.raw(B, flip(c.msg(a1), c.plen + 32, 7), "invalidKey")   # existing session
    c.recv(B, a1)


@scenario("prekey message with EK_A of small order (all zero, canonical): an X3DH DH is zero, invalidKey",
          opk=False)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, replace(c.msg(a0), 33, bytes(32)), "invalidKey")
    c.recv(B, a0)


@scenario("prekey message with an IK_A that is not a valid Ed25519 point (identity, small order) is invalidKey "
          "(checked when X3DH converts it, after the lookups)")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, replace(c.msg(a0), 1, b"\x01" + bytes(31)), "invalidKey")
    c.raw(B, replace(replace(c.msg(a0), 1, b"\x01" + bytes(31)), 65, u32(c.spk_id ^ 1)), "unknownPreKey")
    c.recv(B, a0)


@scenario("prekey message whose IK_A is another valid identity key (fresh Bob): X3DH disagrees, "
          "invalidMessage; no OPK consumed")
def _(c: RatchetCase):
    a0 = c.send(A)
    other = ed25519_pub(c.rand(32))
    c.raw(B, replace(c.msg(a0), 1, other), "invalidMessage")
    c.recv(B, a0)
    c.recv(A, c.send(B))


# ---- prekey lookups
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
    other = c.second_initiator(use_opk=True)
    c.raw(B, other.encrypt(c.b_addr, c.pt()), "unknownPreKey")
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))


@scenario("prekey message naming an unknown kem_id is unknownPreKey (fresh Bob)", kem=True)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, replace(c.msg(a0), 74, u32(c.kem_id ^ 1)), "unknownPreKey")
    c.raw(B, replace(c.msg(a0), 74, u32(c.kem_id ^ 0x40000000)), "unknownPreKey")
    c.recv(B, a0)


@scenario("one-time KEM prekey reused after its first use (a new EK_A naming the same kem_id) is unknownPreKey",
          kem=True, opk=False)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.recv(B, a0)
    other = c.second_initiator(use_kem=True)
    c.raw(B, other.encrypt(c.b_addr, c.pt()), "unknownPreKey")
    c.recv(A, c.send(B))


@scenario("prekey message with a KEM part to a Bob who published no KEM prekey (kem = 0) is unknownPreKey",
          opk=False)
def _(c: RatchetCase):
    kem_seed = c.rand(64)
    ek = ref_mlkem.ek_from_seed(kem_seed)
    b = c.bundle
    fake = rx.Bundle(ik=b.ik, spk_id=b.spk_id, spk=b.spk, spk_sig=b.spk_sig, kem_id=c.aux.int_below(2**32),
                     kem_ek=ek, kem_sig=rx.kem_signature(c.bob_seed, ek))
    other = c.second_initiator(bundle=fake, check=False, kem_seed=kem_seed)
    c.raw(B, other.encrypt(c.b_addr, c.pt()), "unknownPreKey")
    c.recv(B, c.send(A))


@scenario("stripped KEM prekey: a classic prekey message (no KEM part) to an SPK signed with kem = 1 is "
          "invalidMessage (fresh Bob; without and with his OPK); nothing consumed", kem=True)
def _(c: RatchetCase):
    other = c.second_initiator(check=False)
    m = other.encrypt(c.b_addr, c.pt())
    assert m[69] == 0x00
    c.raw(B, m, "invalidMessage")
    other = c.second_initiator(use_opk=True, check=False)
    m = other.encrypt(c.b_addr, c.pt())
    assert m[69] == 0x01
    c.raw(B, m, "invalidMessage")
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("stripped KEM prekey naming Bob's used OPK: the opk_id lookup comes before the stripped-KEM rule, "
          "unknownPreKey", kem=True)
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    other = c.second_initiator(use_opk=True, check=False)
    c.raw(B, other.encrypt(c.b_addr, c.pt()), "unknownPreKey")
    other = c.second_initiator(check=False)
    c.raw(B, other.encrypt(c.b_addr, c.pt()), "invalidMessage")
    c.recv(A, c.send(B))


@scenario("tampered KEM ciphertext (fresh Bob): decapsulation rejects implicitly, X3DH disagrees, "
          "invalidMessage; the KEM prekey is not consumed", kem=True, opk=False)
def _(c: RatchetCase):
    a0 = c.send(A)
    assert c.plen == 70 + 1092                          # kem_id at 70, CT at 74 .. 1161
    c.raw(B, flip(c.msg(a0), 74, 0), "invalidMessage")
    c.raw(B, flip(c.msg(a0), 74 + 1087, 7), "invalidMessage")
    c.recv(B, a0)
    c.recv(A, c.send(B))


# ---- prefix match
@scenario("prekey message with the same EK_A as Bob's session but a different (valid) IK_A is invalidMessage")
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    a1 = c.send(A)
    c.raw(B, replace(c.msg(a1), 1, ed25519_pub(c.rand(32))), "invalidMessage")
    c.recv(B, a1)


@scenario("prekey message with the same EK_A as Bob's session but a different spk_id is invalidMessage "
          "(prefix match; no prekey lookup when the EK_A session exists)",
          note="Bob holds one signed prekey, so the changed spk_id is also unknown to him: per SPEC §3/§4 the "
               "session created from the same EK_A is used and its prefix must match, hence invalidMessage")
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    a1 = c.send(A)
    c.raw(B, replace(c.msg(a1), 65, u32(c.spk_id ^ 2)), "invalidMessage")
    c.recv(B, a1)


@scenario("prekey message with the same EK_A as Bob's session but without the OPK part (flags 0x00) or with "
          "another opk_id is invalidMessage")
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    a1 = c.send(A)
    m = c.msg(a1)
    c.raw(B, m[:69] + b"\x00" + m[74:], "invalidMessage")
    c.raw(B, replace(m, 70, u32(c.opk_id ^ 8)), "invalidMessage")
    c.recv(B, a1)


@scenario("prekey message with the same EK_A as Bob's session but another KEM part (kem_id, a CT byte, the KEM "
          "part removed) is invalidMessage", kem=True)
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    a1 = c.send(A)
    m = c.msg(a1)
    c.raw(B, replace(m, 74, u32(c.kem_id ^ 1)), "invalidMessage")
    c.raw(B, flip(m, 78 + 500, 3), "invalidMessage")
    c.raw(B, m[:69] + b"\x01" + m[70:74] + m[74 + 1092:], "invalidMessage")
    c.recv(B, a1)
    c.recv(A, c.send(B))


# ---- torsion-rewritten EK_A (u -> 1/u: the same X25519 outputs)
@scenario("EK_A rewritten as 1/u (same DH outputs) of a received prekey message with an OPK: the OPK is used, "
          "unknownPreKey")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.recv(B, a0)
    ek = c.msg(a0)[33:65]
    c.raw(B, replace(c.msg(a0), 33, torsion_rewrite(ek)), "unknownPreKey")
    c.recv(A, c.send(B))


@scenario("EK_A rewritten as 1/u of a received prekey message with a KEM prekey and no OPK: the one-time KEM "
          "prekey is used, unknownPreKey", kem=True, opk=False)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.recv(B, a0)
    ek = c.msg(a0)[33:65]
    c.raw(B, replace(c.msg(a0), 33, torsion_rewrite(ek)), "unknownPreKey")
    c.recv(A, c.send(B))


@scenario("EK_A rewritten as 1/u of a received prekey message without OPK or KEM prekey: no EK_A record "
          "matches the new encoding, X3DH runs with another SHA-256(P) and authentication fails",
          opk=False, note="the same DH outputs (X25519 clamps to multiples of 8); only P differs")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.recv(B, a0)
    m = c.msg(a0)
    ek = m[33:65]
    ek2 = torsion_rewrite(ek)
    assert sp.dh(c.spk_sk, ek) == sp.dh(c.spk_sk, ek2) and ek != ek2
    c.raw(B, replace(m, 33, ek2), "invalidMessage")
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))


@scenario("EK_A rewritten as 1/u before the genuine prekey message arrives (fresh Bob): authentication fails, "
          "nothing is consumed; the genuine one then decrypts", kem=True)
def _(c: RatchetCase):
    a0 = c.send(A)
    ek = c.msg(a0)[33:65]
    c.raw(B, replace(c.msg(a0), 33, torsion_rewrite(ek)), "invalidMessage")
    c.recv(B, a0)
    c.recv(A, c.send(B))


# ---- re-attributed messages (another from_address)
@scenario("a prekey message re-attributed to other addresses before the genuine delivery: X3DH runs with the "
          "wrong address in AD and fails (invalidMessage); nothing is consumed",
          alice_address=address_json("élodie", 7), addresses=0)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.recv(B, a0, "invalidMessage", from_address=address_json("e\u0301lodie", 7))
    c.recv(B, a0, "invalidMessage", from_address=address_json("élodie", 8))
    c.recv(B, a0, "invalidMessage", from_address=address_json("mallory", 7))
    c.recv(B, a0)
    c.recv(A, c.send(B))


@scenario("a prekey message re-attributed after the genuine delivery: no session of that address holds its "
          "EK_A, the EK_A record does: duplicateMessage (with spk_id changed: unknownPreKey, the spk_id lookup "
          "comes first; with opk_id or kem_id changed: still duplicateMessage)", kem=True)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.recv(B, a0)
    mallory = address_json("mallory", 1)
    c.recv(B, a0, "duplicateMessage", from_address=mallory)
    c.recv(B, a0, "duplicateMessage", from_address=c.bob_address)
    m = c.msg(a0)
    c.raw(B, replace(m, 65, u32(c.spk_id ^ 4)), "unknownPreKey", from_address=mallory)
    c.raw(B, replace(m, 70, u32(c.opk_id ^ 4)), "duplicateMessage", from_address=mallory)
    c.raw(B, replace(m, 74, u32(c.kem_id ^ 4)), "duplicateMessage", from_address=mallory)
    c.recv(A, c.send(B))


@scenario("0x21 messages re-attributed to another address: that address has no session, noSession")
def _(c: RatchetCase):
    c.handshake()
    a1 = c.send(A)
    c.recv(B, a1, "noSession", from_address=address_json("mallory", 1))
    c.recv(B, a1, "noSession", from_address=c.bob_address)
    c.recv(B, a1)
    b1 = c.send(B)
    c.recv(A, b1, "noSession", from_address=c.alice_address)
    c.recv(A, b1, "noSession", from_address=address_json(c.bob_address["uid"], c.bob_address["device_id"] ^ 1))
    c.recv(A, b1)


# ---- more errors
@scenario("a 0x21 message to Bob before he has any session is noSession")
def _(c: RatchetCase):
    a0 = c.send(A)
    c.raw(B, c.msg(a0)[c.plen:], "noSession")
    c.recv(B, a0)


@scenario("a prekey message delivered to Alice (who holds no prekeys) is unknownPreKey, including her own "
          "prekey message reflected back to her", note="only a responder matches prekey messages against the EK_A "
          "of its sessions (SPEC §4); an initiator has no prekeys, so SPEC §8 makes every prekey message to her "
          "unknownPreKey")
def _(c: RatchetCase):
    fake = rx.make_bundle(c.alice_seed, c.aux.int_below(2**32), c.rand(32))
    other = c.second_initiator(identity_seed=c.bob_seed, address=c.b_addr, bundle=fake, peer=c.a_addr)
    c.raw(A, other.encrypt(c.a_addr, c.pt()), "unknownPreKey")
    a0 = c.send(A)
    c.recv(B, a0)
    b0 = c.send(B)
    c.raw(A, other.encrypt(c.a_addr, c.pt()), "unknownPreKey")
    c.recv(A, a0, "unknownPreKey")      # her own prekey message, delivered back to her
    c.recv(A, b0)


@scenario("message to Alice whose header.dh equals DHr (SPK_B) while she has no receiving chain is "
          "invalidMessage")
def _(c: RatchetCase):
    forged = b"\x21" + x25519_pub(c.spk_sk) + u32(0) + u32(0) + c.rand(80)
    c.raw(A, forged, "invalidMessage")
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


# ---- limits
@scenario("skip limit is checked with no receiving chain: authentic message with PN = 257 is "
          "tooManySkippedMessages at Alice and at a fresh Bob; nothing stored")
def _(c: RatchetCase):
    c.raw(B, c.forge(A, pn=257), "tooManySkippedMessages")
    a0 = c.send(A)
    c.recv(B, a0)
    c.raw(A, c.forge(B, pn=257), "tooManySkippedMessages")
    c.recv(A, c.send(B))


@scenario("skip limit with no receiving chain, small limits: PN = 5 > max_skip 4 is tooManySkippedMessages",
          max_skip=4, max_stored=6)
def _(c: RatchetCase):
    c.recv(B, c.send(A))
    c.raw(A, c.forge(B, pn=5), "tooManySkippedMessages")
    c.raw(A, c.forge(B, n=5), "tooManySkippedMessages")
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


# ---- transactional
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


@scenario("transactional prekey message: a tampered first prekey message creates no session, keeps the "
          "one-time prekeys and records no EK_A; the genuine one then decrypts", kem=True)
def _(c: RatchetCase):
    a0, a1 = c.send(A), c.send(A)
    c.raw(B, flip(c.msg(a0), c.plen + 50, 0), "invalidMessage")
    c.raw(B, flip(c.msg(a1), len(c.msg(a1)) - 2, 4), "invalidMessage")
    c.raw(B, c.msg(a1)[c.plen:], "noSession")
    c.recv(B, a1)
    c.recv(B, a0)
    c.recv(A, c.send(B))


# ---- several sessions per address
@scenario("a second session for Alice's address, created by a prekey message from Alice's identity with a new "
          "EK_A (no OPK left); messages of the first session still decrypt (ratchet key known, stored skipped "
          "key) and make it current again; Bob's message on the second session fails at Alice",
          note="the raw prekey messages come from a second initiator instance of Alice's identity whose keys are "
               "not in the vector; only Bob holds its session")
def _(c: RatchetCase):
    c.handshake()
    a1, a2, a3 = c.send(A), c.send(A), c.send(A)
    c.recv(B, a1)
    other = c.second_initiator()
    p0pt, p1pt = c.pt(), c.pt()
    p0 = other.encrypt(c.b_addr, p0pt)
    p1 = other.encrypt(c.b_addr, p1pt)
    assert p0[0] == 0x22 and p0[69] == 0x00 and p0[33:65] != c.msg(0)[33:65]
    c.raw_ok(B, p0, p0pt)                 # Bob: the new session is current, the first one previous
    b1 = c.send(B)                        # on the new session
    c.recv(A, b1, "invalidMessage")
    c.recv(B, a3)                         # first session knows Alice's ratchet key: current again
    c.raw_ok(B, p1, p1pt)                 # the session of p1's EK_A: current again
    c.recv(B, a2)                         # first session holds a2's skipped key
    b2 = c.send(B)
    c.recv(A, b2)
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("a message for the most recent previous session that needs one DH step there (header.pn equal to its "
          "receiving counter) decrypts and makes it current", opk=False)
def _(c: RatchetCase):
    c.handshake()
    a1 = c.send(A)                        # Alice's DH step after Bob's reply: PN = 1
    other = c.second_initiator()
    p0pt = c.pt()
    c.raw_ok(B, other.encrypt(c.b_addr, p0pt), p0pt)
    c.recv(B, a1)
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))


@scenario("messages for a previous session that knows their ratchet key are decided by it: a replay is "
          "duplicateMessage, a forged bad padding is invalidPadding, a tampered one invalidMessage")
def _(c: RatchetCase):
    c.handshake()
    a1, a2 = c.send(A), c.send(A)
    c.recv(B, a1)
    other = c.second_initiator()
    p0pt = c.pt()
    c.raw_ok(B, other.encrypt(c.b_addr, p0pt), p0pt)
    c.recv(B, a1, "duplicateMessage")
    c.raw(B, c.forge(A, padded=b"\x01\x00"), "invalidPadding")
    c.raw(B, flip(c.msg(a2), 45, 0), "invalidMessage")
    c.recv(B, a2)
    c.recv(A, c.send(B))


@scenario("40 previous sessions are kept: after 40 further sessions for Alice's address the first one is the "
          "oldest previous session and still decrypts a message on a ratchet key it knows", opk=False)
def _(c: RatchetCase):
    c.handshake()
    a1, a2 = c.send(A), c.send(A)
    c.recv(B, a1)
    for _ in range(MAX_PREVIOUS):
        other = c.second_initiator()
        pt = c.pt(1)
        c.raw_ok(B, other.encrypt(c.b_addr, pt), pt)
    assert len(c.bob.sessions[c.a_addr]) == 1 + MAX_PREVIOUS
    c.recv(B, a2)
    c.recv(A, c.send(B))


@scenario("a 41st further session drops the first one: its message fails with the current session's error, "
          "and a replay of its prekey message (no session holds its EK_A any more) is duplicateMessage through "
          "the EK_A record", opk=False)
def _(c: RatchetCase):
    a0 = c.send(A)
    c.recv(B, a0)
    c.recv(A, c.send(B))
    a1, a2 = c.send(A), c.send(A)
    c.recv(B, a1)
    for _ in range(MAX_PREVIOUS + 1):
        other = c.second_initiator()
        pt = c.pt(1)
        c.raw_ok(B, other.encrypt(c.b_addr, pt), pt)
    assert len(c.bob.sessions[c.a_addr]) == 1 + MAX_PREVIOUS
    c.recv(B, a2, "invalidMessage")
    c.recv(B, a0, "duplicateMessage")


# ---- content types (§2): distributions sent inside the session (type 2); kept last so that the
# ids of the tests above do not move
def distribution_from(c: RatchetCase, frm: str) -> bytes:
    """A §5 distribution by party `frm` for a random 16-byte group (ref_sender_key.py), at a random
    iteration: the plaintext of a content-type-2 send."""
    chain = SenderChain(c.rand(32), c.rand(32), c.rand(16), c.addr(frm))
    chain.advance_to(c.aux.int_below(50))
    d = chain.distribution()
    assert len(d) == 118 and d[0] == 0x23
    return d


@scenario("content types (SPEC §2): sender-key distributions sent inside the session with content type 2 "
          "(a prekey message, a 0x21 message, the first message of a new chain) and chat messages with "
          "type 1; each delivered first as the other type (a relabeled envelope) is invalidPadding and "
          "changes nothing (no session, prekey or EK_A record; no skipped key; no DH step or key drawn), "
          "then decrypts as its own type",
          note="events with content_type 2: the send pads with 0x02, the recv expects 0x02; other events use 1")
def _(c: RatchetCase):
    a0 = c.send(A, distribution_from(c, A), content_type=2)
    c.recv(B, a0, "invalidPadding")                      # X3DH authenticates, the type does not match
    c.recv(B, a0, content_type=2)
    b0 = c.send(B)
    c.recv(A, b0, "invalidPadding", content_type=2)      # the DH step is not taken
    c.recv(A, b0)
    a1 = c.send(A, distribution_from(c, A), content_type=2)
    a2 = c.send(A)
    c.recv(B, a2, "invalidPadding", content_type=2)      # a1's key is not stored as skipped
    c.recv(B, a1, "invalidPadding")
    c.recv(B, a1, content_type=2)
    c.recv(B, a2)
    b1 = c.send(B, distribution_from(c, B), content_type=2)
    c.recv(A, b1, "invalidPadding")                      # no DH step, no key drawn
    c.recv(A, b1, content_type=2)
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("content types (SPEC §2) with a KEM prekey and skipped keys: a distribution (content type 2) "
          "delivered out of order as the first prekey message, first as type 1 (invalidPadding: no session, "
          "no KEM prekey consumed), then as type 2; a chat message opened with a stored skipped key as "
          "type 2 is invalidPadding and the key stays stored; the same on Alice's side after a DH step",
          opk=False, kem=True,
          note="events with content_type 2: the send pads with 0x02, the recv expects 0x02; other events use 1")
def _(c: RatchetCase):
    a0 = c.send(A)
    a1 = c.send(A, distribution_from(c, A), content_type=2)
    c.recv(B, a1, "invalidPadding")
    c.recv(B, a1, content_type=2)                        # X3DH with the KEM prekey; a0's key skipped
    c.recv(B, a0, "invalidPadding", content_type=2)      # the skipped key is kept
    c.recv(B, a0)
    b0 = c.send(B, distribution_from(c, B), content_type=2)
    b1 = c.send(B)
    c.recv(A, b1, "invalidPadding", content_type=2)      # no DH step
    c.recv(A, b1)                                        # DH step; b0's key skipped
    c.recv(A, b0, "invalidPadding")
    c.recv(A, b0, content_type=2)
    c.recv(A, b0, "duplicateMessage", content_type=2)
    c.recv(B, c.send(A))



# ---- SPEC §9: the initiator's registration id in the prekey prefix (flags bit 2). Appended after
# the content types so that no earlier id moves; their own Drbg label (ratchet/registration-id/{tid}).
# SPEC §8 names no registration_id for `alice`, so every message with an id is a raw prekey
# message from a second initiator instance of Alice's identity (its keys are not in the vector).
RID_LABEL = "ratchet/registration-id"
RID_NOTE = ("the prekey messages with a registration id (flags bit 2) are raw messages from second initiator "
            "instances of Alice's identity and address with new EK_As, whose keys are not in the vector (SPEC "
            "§8 names no registration_id for alice); only Bob holds their sessions")


def random_rid(c: RatchetCase) -> int:
    """A random registration id in 2 ... 2^31 - 1 whose first byte is not 0x21 (so that id ^ 1 is
    in range too, and the id read as an inner message has another type byte)."""
    while True:
        rid = 1 + c.aux.int_below(2**31 - 1)
        if rid >= 2 and rid >> 24 != 0x21:
            return rid


def rid_offset(m: bytes) -> int:
    """Where u32(registration_id) starts (or would start) in prekey message m: after the OPK and KEM parts."""
    return prefix_len(m[69] & 0x03)


def with_rid(m: bytes, rid: int) -> bytes:
    assert m[69] & 0x04
    return replace(m, rid_offset(m), u32(rid))


def insert_rid(m: bytes, rid: int) -> bytes:
    """m (flags bit 2 clear) with flags bit 2 set and u32(rid) inserted at the end of the prefix."""
    assert not m[69] & 0x04
    off = rid_offset(m)
    return m[:69] + bytes([m[69] | 0x04]) + m[70:off] + u32(rid) + m[off:]


def remove_rid(m: bytes) -> bytes:
    """m (flags bit 2 set) with flags bit 2 cleared and its four id bytes removed."""
    assert m[69] & 0x04
    off = rid_offset(m)
    return m[:69] + bytes([m[69] & ~0x04]) + m[70:off] + m[off + 4:]


@scenario("SPEC §9: prekey messages carrying the initiator's registration id (flags 0x04: a 74-byte prefix, the "
          "id after spk_id and flags) from second initiators of Alice's identity with new EK_As decrypt and give "
          "Bob further sessions for Alice's address; the next prekey message of each (same prefix) decrypts "
          "through its session and a replay is duplicateMessage; ids random, 1 and 2^31 - 1 (the ends of the "
          "range); the first session still decrypts Alice's messages", label=RID_LABEL, note=RID_NOTE)
def _(c: RatchetCase):
    c.handshake()
    a1, a2 = c.send(A), c.send(A)
    c.recv(B, a1)
    for rid in (random_rid(c), 1, 2**31 - 1):
        other = c.second_initiator(registration_id=rid)
        p0pt, p1pt = c.pt(), c.pt()
        p0, p1 = other.encrypt(c.b_addr, p0pt), other.encrypt(c.b_addr, p1pt)
        assert p0[69] == 0x04 and read_u32(p0, 70) == rid and p0[74] == 0x21 and p0[:74] == p1[:74]
        assert p0[33:65] != c.msg(0)[33:65]
        c.raw_ok(B, p0, p0pt)
        assert c.bob.current(c.a_addr).peer_registration_id == rid
        c.raw_ok(B, p1, p1pt)
        c.raw(B, p0, "duplicateMessage")
    b1 = c.send(B)                        # on the last new session (id 2^31 - 1)
    assert other.decrypt(c.b_addr, c.msg(b1)) == c.sends[b1][1]
    c.recv(A, b1, "invalidMessage")
    c.recv(B, a2)                         # the first session knows a2's ratchet key: current again
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))


@scenario("SPEC §9: a prekey message with flags 0x07 (OPK, KEM prekey and registration id: a 1170-byte prefix, "
          "the id after the KEM ciphertext) from a second initiator of Alice's identity decrypts on a fresh Bob, "
          "consuming his one-time prekeys (Alice's own prekey message, naming the same OPK, is then "
          "unknownPreKey); cut inside the id (1168 bytes) or with the inner message one byte short "
          "(1170 + 56), invalidMessage", kem=True, label=RID_LABEL, note=RID_NOTE)
def _(c: RatchetCase):
    rid = random_rid(c)
    other = c.second_initiator(registration_id=rid, use_opk=True, use_kem=True)
    p0pt, p1pt = c.pt(), c.pt()
    p0, p1 = other.encrypt(c.b_addr, p0pt), other.encrypt(c.b_addr, p1pt)
    assert prefix_len(0x07) == 1170 and p0[69] == 0x07 and read_u32(p0, 1166) == rid and p0[1170] == 0x21
    for cut in (1168, 1170 + 56):
        c.raw(B, p0[:cut], "invalidMessage")
    c.raw_ok(B, p0, p0pt)
    c.raw_ok(B, p1, p1pt)
    a0 = c.send(A)
    c.recv(B, a0, "unknownPreKey")
    b0 = c.send(B)
    assert other.decrypt(c.b_addr, c.msg(b0)) == c.sends[b0][1]


@scenario("SPEC §9: flags 0x05 (OPK and registration id, a 78-byte prefix; the flags of test 42's event 1) on a "
          "real prekey message from a second initiator of Alice's identity decrypts on a fresh Bob; before it, "
          "truncations are invalidMessage: the prefix ending before the id (74 bytes), cut inside the id (75 and "
          "77), the id complete and no inner message (78), the inner message one byte short (78 + 56); the id "
          "with flag bit 2 cleared is read as the inner message (its first byte, not 0x21: unsupportedVersion); "
          "afterwards Alice's prekey message names a used OPK, unknownPreKey", label=RID_LABEL, note=RID_NOTE)
def _(c: RatchetCase):
    rid = random_rid(c)
    other = c.second_initiator(registration_id=rid, use_opk=True)
    p0pt = c.pt()
    p0 = other.encrypt(c.b_addr, p0pt)
    assert p0[69] == 0x05 and read_u32(p0, 74) == rid and p0[78] == 0x21
    for cut in (74, 75, 77, 78, 78 + 56):
        c.raw(B, p0[:cut], "invalidMessage")
    cleared = replace(p0, 69, b"\x01")
    assert cleared[74] == rid >> 24 != 0x21
    c.raw(B, cleared, "unsupportedVersion")
    c.raw_ok(B, p0, p0pt)
    c.recv(B, c.send(A), "unknownPreKey")
    b0 = c.send(B)
    assert other.decrypt(c.b_addr, c.msg(b0)) == c.sends[b0][1]


@scenario("SPEC §9: the registration id is part of P (bound into SK) and of the prefix match. Fresh Bob: the "
          "message with another valid id, with the id removed (flags 0x00), and Alice's own prekey message with "
          "an id inserted (flags 0x04) run X3DH over another P: invalidMessage, nothing consumed. With the "
          "sessions created by the genuine messages, their next prekey messages (same EK_A) with another id, "
          "without the id, or with an id added are a prefix mismatch: invalidMessage", opk=False,
          label=RID_LABEL, note=RID_NOTE + "; the prefix-mismatch events would decrypt through the EK_A's session "
                                          "if the registration id were left out of the prefix match (checked)")
def _(c: RatchetCase):
    rid = random_rid(c)
    other = c.second_initiator(registration_id=rid)
    p0pt, p1pt = c.pt(), c.pt()
    p0, p1 = other.encrypt(c.b_addr, p0pt), other.encrypt(c.b_addr, p1pt)
    a0, a1 = c.send(A), c.send(A)
    assert c.msg(a0)[69] == 0x00
    c.raw(B, with_rid(p0, rid ^ 1), "invalidMessage")
    c.raw(B, remove_rid(p0), "invalidMessage")
    c.raw(B, insert_rid(c.msg(a0), rid), "invalidMessage")
    c.raw_ok(B, p0, p0pt)
    c.recv(B, a0)
    c.raw(B, with_rid(p1, rid ^ 1), "invalidMessage", sharp="registration-id-match")
    c.raw(B, remove_rid(p1), "invalidMessage", sharp="registration-id-match")
    c.raw(B, insert_rid(c.msg(a1), rid), "invalidMessage", sharp="registration-id-match")
    c.raw_ok(B, p1, p1pt)
    c.recv(B, a1)
    c.recv(A, c.send(B))
    c.recv(B, c.send(A))


@scenario("SPEC §9: registration ids 0, 2^31, 2^31 + 1 and 0xffffffff in the prekey prefix are invalidMessage "
          "(fresh Bob); each message is otherwise valid, its SK computed over that P, so only the range check "
          "refuses it; reflected to Alice, an id 0 prefix is invalidMessage (checked before the lookups) where "
          "a valid id is unknownPreKey; nothing is consumed", label=RID_LABEL,
          note=RID_NOTE + "; every out-of-range message decrypts when the range check is left out (checked)")
def _(c: RatchetCase):
    for rid in (0, 2**31, 2**31 + 1, 0xFFFFFFFF):
        other = c.second_initiator(registration_id=rid, use_opk=True)
        m = other.encrypt(c.b_addr, c.pt())
        assert m[69] == 0x05 and read_u32(m, 74) == rid
        c.raw(B, m, "invalidMessage", sharp="registration-id-range")
    zero = c.second_initiator(registration_id=0).encrypt(c.b_addr, c.pt())
    c.raw(A, zero, "invalidMessage")
    valid = c.second_initiator(registration_id=random_rid(c)).encrypt(c.b_addr, c.pt())
    c.raw(A, valid, "unknownPreKey")
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("SPEC §9: a registration id out of range is checked with the lengths and flags, before the inner type "
          "byte, key canonicity, the lookups and IK_A's conversion: pairs of one message with a valid id (giving "
          "unsupportedVersion, invalidKey, unknownPreKey, invalidKey) and the same with an id out of range "
          "(invalidMessage); flag bit 3 before the inner type byte likewise", opk=False, label=RID_LABEL,
          note=RID_NOTE)
def _(c: RatchetCase):
    rid = random_rid(c)
    other = c.second_initiator(registration_id=rid)
    p0pt = c.pt()
    m = other.encrypt(c.b_addr, p0pt)
    assert m[69] == 0x04 and rid_offset(m) == 70 and m[74] == 0x21
    pairs = [
        (replace(m, 74, b"\x01"), "unsupportedVersion", 0),                         # inner type byte
        (flip(m, 64, 7), "invalidKey", 2**31),                                       # EK_A bit 255
        (flip(m, 74 + 32, 7), "invalidKey", 0xFFFFFFFF),                             # header.dh bit 255
        (replace(m, 65, u32(c.spk_id ^ 1)), "unknownPreKey", 0),                     # spk_id
        (replace(m, 1, b"\x01" + bytes(31)), "invalidKey", 2**31),                   # IK_A not a valid point
    ]
    for edited, error, bad in pairs:
        c.raw(B, edited, error)
        c.raw(B, with_rid(edited, bad), "invalidMessage")
    c.raw(B, replace(replace(m, 74, b"\x01"), 69, b"\x0c"), "invalidMessage")      # flag bit 3, inner 0x01
    c.raw_ok(B, m, p0pt)
    c.recv(B, c.send(A))
    c.recv(A, c.send(B))


@scenario("SPEC §9: flag bits 3-7 stay reserved next to a registration id: flags 0x0c, 0x0d, 0x84 and 0x14 on "
          "prekey messages whose SK is computed over that P (only the reserved-bit check refuses them), and "
          "0xfc set on a valid 0x04 message, are invalidMessage; nothing is consumed (Alice's prekey message "
          "then uses the OPK)", label=RID_LABEL,
          note=RID_NOTE + "; the messages with flags 0x0c, 0x0d, 0x84 and 0x14 decrypt when the reserved bits are "
                          "ignored (checked)")
def _(c: RatchetCase):
    rid = random_rid(c)
    for extra, use_opk, flags in ((0x08, False, 0x0C), (0x08, True, 0x0D), (0x80, False, 0x84), (0x10, False, 0x14)):
        other = c.second_initiator(registration_id=rid, use_opk=use_opk, extra_flags=extra)
        m = other.encrypt(c.b_addr, c.pt())
        assert m[69] == flags and read_u32(m, rid_offset(m)) == rid
        c.raw(B, m, "invalidMessage", sharp="reserved-flags")
    m = c.second_initiator(registration_id=rid).encrypt(c.b_addr, c.pt())
    c.raw(B, replace(m, 69, b"\xfc"), "invalidMessage")
    c.recv(B, c.send(A))
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
def sk_groups(d: Drbg) -> list:
    return [
        (d.bytes(16), "a 16-byte group id (a UUID's bytes)"),
        ("family-chat".encode(), "group id \"family-chat\" (ASCII)"),
        ("Familie 👪 Müller".encode(), "group id of non-ASCII UTF-8 text"),
        (b"\x00", "a 1-byte group id (0x00)"),
        (d.bytes(255), "a 255-byte group id (the maximum)"),
    ]


SK_SENDERS = [
    address_json("alice", 1),
    address_json("bob", 0xFFFFFFFF),
    address_json("élodie", 3),
    address_json("3f2504e0-4f89-11d3-9a0c-0305e82c3301", 0),
    address_json("x" * 255, 2),
]


class SenderKeyCase:
    def __init__(self, seed: int, tid: int, comment: str, iteration: int = 0, note: str = "",
                 group: int | None = None, sender: int | None = None):
        self.tid, self.comment, self.note = tid, comment, note
        d = Drbg(seed, f"sender-key/{tid}/setup")
        self.chain_key, self.signing_seed = d.bytes(32), d.bytes(32)
        groups = sk_groups(d)
        gi = tid % len(groups) if group is None else group
        self.group, gnote = groups[gi]
        self.sender_address = SK_SENDERS[tid % len(SK_SENDERS) if sender is None else sender]
        self.sender_enc = encode_address_json(self.sender_address)
        if gi != 0:
            self.note = (self.note + "; " if self.note else "") + gnote
        self.iteration = iteration
        self.aux = Drbg(seed, f"sender-key/{tid}/aux")
        self.sender = SenderChain(self.chain_key, self.signing_seed, self.group, self.sender_enc)
        self.sender.advance_to(iteration)
        self.distribution = self.sender.distribution()
        assert len(self.distribution) == 102 + len(self.group)
        self.receiver = SenderKeyReceiver()
        assert self.receiver.process_distribution(self.sender_enc, self.group, self.distribution) == "stored"
        self.more: list = []
        self.events: list = []
        self.sends: list = []

    def pt(self, n: int | None = None) -> bytes:
        if n is None:
            n = 1 + self.aux.int_below(60)
        return self.aux.bytes(n)

    def msg(self, k: int) -> bytes:
        return self.sends[k][1]

    def other_group(self) -> bytes:
        g = bytearray(self.group)
        g[-1] ^= 0x01
        return bytes(g)

    def more_distribution(self, d: bytes, expect: str = "stored", *, group: bytes | None = None,
                          from_address: dict | None = None) -> None:
        """A more_distributions entry: expect 'stored', 'ignored' or an error name."""
        assert not self.events, "more_distributions are processed before the events"
        g = self.group if group is None else group
        sender = self.sender_enc if from_address is None else encode_address_json(from_address)
        before = self.receiver.state()
        res, got = outcome(self.receiver.process_distribution, sender, g, d)
        if res == "ok":
            assert got == expect, f"sender-key test {self.tid}: distribution {got}, expected {expect}"
            if got == "ignored":
                assert self.receiver.state() == before
        else:
            assert res == expect, f"sender-key test {self.tid}: distribution {res}, expected {expect}"
            assert self.receiver.state() == before
        e = {"distribution": d.hex(), "group_id": g.hex()}
        if from_address is not None:
            e["from_address"] = from_address
        if expect == "ignored":
            e["ignored"] = True
        elif expect != "stored":
            e["error"] = expect
        self.more.append(e)

    def send(self, plaintext: bytes | None = None) -> int:
        pt = self.pt() if plaintext is None else plaintext
        m = self.sender.encrypt(pt)
        self.sends.append((pt, m))
        self.events.append({"op": "send", "plaintext": pt.hex(), "message": m.hex()})
        return len(self.sends) - 1

    def _deliver(self, m: bytes, expect: str, group: bytes | None, from_address: dict | None):
        g = self.group if group is None else group
        sender = self.sender_enc if from_address is None else encode_address_json(from_address)
        before = self.receiver.state()
        res, pt = outcome(self.receiver.decrypt, sender, g, m)
        where = f"sender-key test {self.tid}"
        if res == "ok":
            assert expect == "ok", f"{where}: expected {expect}, reference decrypted"
        else:
            assert expect in (res, "any"), f"{where}: expected {expect}, reference says {res}"
            assert self.receiver.state() == before, f"{where}: failed decrypt changed state"
        return pt

    def _context(self, e: dict, group: bytes | None, from_address: dict | None) -> dict:
        if group is not None:
            e["group_id"] = group.hex()
        if from_address is not None:
            e["from_address"] = from_address
        return e

    def recv(self, k: int, expect: str = "ok", *, group: bytes | None = None, from_address: dict | None = None):
        pt, m = self.sends[k]
        got = self._deliver(m, expect, group, from_address)
        if expect == "ok":
            assert got == pt
            self.events.append(self._context({"op": "recv", "send": k, "plaintext": pt.hex()}, group, from_address))
        else:
            self.events.append(self._context({"op": "recv", "send": k, "error": expect}, group, from_address))

    def raw(self, m: bytes, expect: str, *, group: bytes | None = None, from_address: dict | None = None) -> None:
        assert expect != "ok"
        self._deliver(m, expect, group, from_address)
        self.events.append(self._context({"op": "recv", "message": m.hex(), "error": expect}, group, from_address))

    def resign(self, signed: bytes, seed: bytes | None = None) -> bytes:
        return sign_message(self.group, self.sender_enc, signed, seed or self.signing_seed)

    def to_json(self) -> dict:
        t = {"id": self.tid, "comment": self.comment, "group_id": self.group.hex(),
             "sender_address": self.sender_address, "chain_key": self.chain_key.hex(),
             "signing_seed": self.signing_seed.hex(), "iteration": self.iteration,
             "distribution": self.distribution.hex()}
        if self.more:
            t["more_distributions"] = self.more
        if self.note:
            t["note"] = self.note
        t["events"] = self.events
        return t


def replay_sender_key(t: dict) -> None:
    h = bytes.fromhex
    group, sender_enc = h(t["group_id"]), encode_address_json(t["sender_address"])
    sender = SenderChain(h(t["chain_key"]), h(t["signing_seed"]), group, sender_enc)
    sender.advance_to(t["iteration"])
    assert sender.distribution().hex() == t["distribution"], f"sender-key test {t['id']}: distribution"
    receiver = SenderKeyReceiver()
    assert receiver.process_distribution(sender_enc, group, h(t["distribution"])) == "stored"
    for j, e in enumerate(t.get("more_distributions", [])):
        where = f"sender-key test {t['id']} more_distributions[{j}]"
        frm = encode_address_json(e["from_address"]) if "from_address" in e else sender_enc
        before = receiver.state()
        res, got = outcome(receiver.process_distribution, frm, h(e["group_id"]), h(e["distribution"]))
        if "error" in e:
            assert res == e["error"] and receiver.state() == before, f"{where}: {res}"
        elif e.get("ignored"):
            assert res == "ok" and got == "ignored" and receiver.state() == before, where
        else:
            assert res == "ok" and got == "stored", where
    sends = []
    for i, e in enumerate(t["events"]):
        where = f"sender-key test {t['id']} event {i}"
        if e["op"] == "send":
            m = sender.encrypt(h(e["plaintext"]))
            assert m.hex() == e["message"], where
            sends.append(m)
            continue
        m = sends[e["send"]] if "send" in e else h(e["message"])
        g = h(e["group_id"]) if "group_id" in e else group
        frm = encode_address_json(e["from_address"]) if "from_address" in e else sender_enc
        before = receiver.state()
        res, pt = outcome(receiver.decrypt, frm, g, m)
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


@sk_scenario("messages below the distribution's iteration were sent before this member got the chain: "
             "messageKeyUnavailable (not duplicateMessage), also after the chain has advanced", iteration=1000)
def _(c):
    older = SenderChain(c.chain_key, c.signing_seed, c.group, c.sender_enc)
    msgs = {}
    for it in (0, 1, 500, 998, 999):
        older.advance_to(it)
        msgs[it] = older.forge(c.pt())
    c.raw(msgs[999], "messageKeyUnavailable")
    c.raw(msgs[0], "messageKeyUnavailable")
    s = [c.send() for _ in range(3)]
    c.recv(s[2])
    c.raw(msgs[998], "messageKeyUnavailable")
    c.raw(msgs[500], "messageKeyUnavailable")
    c.recv(s[0])
    c.recv(s[0], "duplicateMessage")
    c.raw(msgs[1], "messageKeyUnavailable")
    c.recv(s[1])


@sk_scenario("start iteration 10: 12 stores 10 and 11; 10 decrypts, then 10 again is duplicateMessage, 9 is "
             "messageKeyUnavailable", iteration=10)
def _(c):
    older = SenderChain(c.chain_key, c.signing_seed, c.group, c.sender_enc)
    older.advance_to(9)
    m9 = older.forge(c.pt())
    s = [c.send() for _ in range(3)]
    c.recv(s[2])
    c.recv(s[0])
    c.recv(s[0], "duplicateMessage")
    c.raw(m9, "messageKeyUnavailable")
    c.recv(s[1])
    c.recv(s[2], "duplicateMessage")


@sk_scenario("message from a chain the receiver does not hold is unknownChain")
def _(c):
    other = SenderChain(c.aux.bytes(32), c.aux.bytes(32), c.group, c.sender_enc)
    c.raw(other.encrypt(c.pt()), "unknownChain")
    c.recv(c.send())


@sk_scenario("tampered chain_id is unknownChain")
def _(c):
    k = c.send()
    c.raw(flip(c.msg(k), 1, 0), "unknownChain")
    c.raw(flip(c.msg(k), 32, 7), "unknownChain")
    c.recv(k)


@sk_scenario("a message from another chain with the same signing key is still unknownChain", iteration=2)
def _(c):
    other = SenderChain(c.aux.bytes(32), c.signing_seed, c.group, c.sender_enc)
    c.raw(other.encrypt(c.pt()), "unknownChain")
    c.recv(c.send())


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
    c.raw(c.resign(m[:-64], c.aux.bytes(32)), "invalidSignature")
    c.recv(k)


@sk_scenario("non-canonical signature (S + L) is invalidSignature")
def _(c):
    k = c.send()
    m = c.msg(k)
    s = int.from_bytes(m[-32:], "little") + L
    c.raw(m[:-32] + s.to_bytes(32, "little"), "invalidSignature")
    c.recv(k)


@sk_scenario("signatures that leave out the group, the sender, or both (version 1's signed bytes) are "
             "invalidSignature")
def _(c):
    k = c.send()
    signed = c.msg(k)[:-64]
    c.raw(signed + ed25519_sign(c.signing_seed, signed), "invalidSignature")
    c.raw(signed + ed25519_sign(c.signing_seed, c.sender_enc + signed), "invalidSignature")
    c.raw(signed + ed25519_sign(c.signing_seed, encode_group(c.group) + signed), "invalidSignature")
    c.raw(signed + ed25519_sign(c.signing_seed, c.sender_enc + encode_group(c.group) + signed), "invalidSignature")
    c.recv(k)


@sk_scenario("tampered ciphertext, tag, commitment or iteration without re-signing is invalidSignature "
             "(the signature is checked first)")
def _(c):
    k = c.send()
    m = c.msg(k)
    c.raw(flip(m, 69, 0), "invalidSignature")           # first ciphertext byte
    c.raw(flip(m, len(m) - 65, 0), "invalidSignature")  # last tag byte
    c.raw(flip(m, 36, 0), "invalidSignature")           # iteration 0 -> 1
    c.raw(flip(m, 50, 2), "invalidSignature")           # commitment
    c.recv(k)


@sk_scenario("tampered ciphertext/tag re-signed with the chain's key (authentic signature, AEAD fails) "
             "is invalidMessage")
def _(c):
    k = c.send()
    signed = c.msg(k)[:-64]
    c.raw(c.resign(flip(signed, 72, 1)), "invalidMessage")
    c.raw(c.resign(flip(signed, len(signed) - 1, 7)), "invalidMessage")
    c.recv(k)


@sk_scenario("a message re-signed by the chain's signing key with an altered commitment is invalidMessage at the "
             "commitment check, before any AEAD work; the genuine message then decrypts")
def _(c):
    k = c.send()
    signed = c.msg(k)[:-64]
    c.raw(c.resign(flip(signed, 37, 0)), "invalidMessage")
    c.raw(c.resign(replace(signed, 37, bytes(32))), "invalidMessage")
    # sealed consistently under a wrong commitment (its AAD carries the wrong one too)
    c.raw(c.sender.forge(c.pt(), commit=c.aux.bytes(32)), "invalidMessage")
    c.recv(k)
    c.recv(c.send())


@sk_scenario("re-signed message claiming another iteration (commitment mismatch) is invalidMessage; nothing "
             "is skipped", iteration=5)
def _(c):
    k = c.send()
    signed = c.msg(k)[:-64]
    c.raw(c.resign(replace(signed, 33, u32(8))), "invalidMessage")
    c.recv(k)
    c.recv(c.send())


@sk_scenario("authentic messages with invalid padding are invalidPadding; the chain does not advance")
def _(c):
    good = pad(b"group")
    c.raw(c.sender.forge(padded=b"\x00" + good[1:]), "invalidPadding")
    c.raw(c.sender.forge(padded=good[:-4] + u32(60)), "invalidPadding")
    c.recv(c.send(b"group"))


@sk_scenario("an authentic 149-byte message (minimum length: empty AEAD plaintext) is invalidPadding")
def _(c):
    m = c.sender.forge(padded=b"")
    assert len(m) == 149
    c.raw(m, "invalidPadding")
    c.recv(c.send())


@sk_scenario("type bytes of version 1 (0x11 message, 0x10 distribution) and other wrong ones (0x23, 0x21, 0x25, "
             "0xff) are unsupportedVersion")
def _(c):
    k = c.send()
    m = c.msg(k)
    for t in (b"\x11", b"\x10", b"\x23", b"\x21", b"\x25", b"\xff"):
        c.raw(replace(m, 0, t), "unsupportedVersion")
    c.raw(c.distribution, "unsupportedVersion")
    c.raw(b"\x11" + m[1:30], "unsupportedVersion")   # SPEC §5: type byte checked before length
    c.recv(k)


@sk_scenario("short messages are invalidMessage (148, 37, 1 and 0 bytes)")
def _(c):
    k = c.send()
    m = c.msg(k)
    c.raw(m[:148], "invalidMessage")
    c.raw(m[:37], "invalidMessage")
    c.raw(m[:1], "invalidMessage")
    c.raw(b"", "invalidMessage")
    c.raw(m[:-1], "invalidSignature")     # long enough; the signature no longer verifies
    c.recv(k)


@sk_scenario("empty plaintext and a 5000-byte plaintext (8192 bucket)")
def _(c):
    c.recv(c.send(b""))
    k = c.send(c.pt(5000))
    assert len(c.msg(k)) == 69 + 8192 + 16 + 64
    c.recv(k)


@sk_scenario("padding bucket edges: 59 and 60 byte plaintexts", iteration=3)
def _(c):
    c.recv(c.send(c.pt(59)))
    c.recv(c.send(c.pt(60)))


@sk_scenario("transactional: a failed message (bad signature; authentic signature but bad tag) at a later "
             "iteration skips nothing; genuine messages then decrypt")
def _(c):
    s = [c.send() for _ in range(4)]
    m = c.msg(s[3])
    c.raw(flip(m, len(m) - 5, 0), "invalidSignature")
    c.raw(c.resign(flip(m[:-64], 80, 0)), "invalidMessage")
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


@sk_scenario("large start iteration 65536, out-of-order delivery and a replay", iteration=65536)
def _(c):
    s = [c.send() for _ in range(5)]
    for i in (4, 2, 0, 3, 1):
        c.recv(s[i])
    c.recv(s[2], "duplicateMessage")


@sk_scenario("authentic (re-signed) headers: 257 ahead and 2^32-1 are tooManySkippedMessages, a stale iteration "
             "duplicateMessage and one below the start messageKeyUnavailable, all decided before AEAD work",
             iteration=5)
def _(c):
    a, b = c.send(), c.send()
    c.recv(a)
    signed = c.msg(b)[:-64]
    c.raw(c.resign(replace(signed, 33, u32(6 + 257))), "tooManySkippedMessages")
    c.raw(c.resign(replace(signed, 33, u32(0xFFFFFFFF))), "tooManySkippedMessages")
    c.raw(c.resign(replace(signed, 33, u32(5))), "duplicateMessage")
    c.raw(c.resign(replace(signed, 33, u32(4))), "messageKeyUnavailable")
    c.raw(c.resign(flip(signed, 75, 0)), "invalidMessage")
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


# ---- group and sender binding
@sk_scenario("a message decrypted for another group (relabeled) is unknownChain: the chain is held for its own "
             "group only")
def _(c):
    k = c.send()
    c.recv(k, "unknownChain", group=c.other_group())
    c.recv(k, "unknownChain", group=c.group + b"\x00" if len(c.group) < 255 else c.group[:-1])
    c.recv(k)


@sk_scenario("the same chain distributed for two groups: a message sent for one group and decrypted for the "
             "other finds the chain but fails the signature (the group is signed): invalidSignature",
             iteration=3)
def _(c):
    g2 = c.other_group()
    c.more_distribution(c.sender.distribution(group=g2), group=g2)
    k = c.send()
    c.recv(k, "invalidSignature", group=g2)
    c.recv(k)
    forged = c.sender.forge(c.pt(), group=g2)       # sent for g2
    c.raw(forged, "invalidSignature")
    c.recv(c.send())


@sk_scenario("a message re-attributed to another sender (from_address) is unknownChain: that sender holds no "
             "such chain")
def _(c):
    k = c.send()
    a = c.sender_address
    c.recv(k, "unknownChain", from_address=address_json("mallory", 1))
    c.recv(k, "unknownChain", from_address=address_json(a["uid"], a["device_id"] ^ 1))
    c.recv(k)


@sk_scenario("a member passes another member's distribution off as its own (stored under the impostor's "
             "address): the real sender's messages delivered as from the impostor fail the signature "
             "(the sender is signed): invalidSignature; delivered from the real sender they decrypt", iteration=2)
def _(c):
    mallory = address_json("mallory", 4)
    c.more_distribution(c.distribution, from_address=mallory)
    k1, k2 = c.send(), c.send()
    c.recv(k1, "invalidSignature", from_address=mallory)
    c.recv(k1)
    c.recv(k2, "invalidSignature", from_address=mallory)
    c.recv(k2)
    c.recv(k2, "invalidSignature", from_address=mallory)   # the signature is checked before the iteration


@sk_scenario("é precomposed and e + U+0301 decomposed are different senders: a chain held for \"élodie\" "
             "(c3 a9) is unknownChain for \"e\u0301lodie\" (65 cc 81)", sender=2)
def _(c):
    assert c.sender_address["uid"] == "élodie"
    k = c.send()
    c.recv(k, "unknownChain", from_address=address_json("e\u0301lodie", c.sender_address["device_id"]))
    c.recv(k)


# ---- distributions
@sk_scenario("a distribution for another group is invalidMessage (its group differs from the group it is "
             "processed for); the group is checked before the signing key", iteration=4)
def _(c):
    g2 = c.other_group()
    c.more_distribution(c.sender.distribution(group=g2), "invalidMessage")
    c.more_distribution(c.sender.distribution(), "invalidMessage", group=g2)
    bad_key = c.sender.distribution(group=g2)[:-32] + bytes(32)
    c.more_distribution(bad_key, "invalidMessage")
    c.recv(c.send())
    k = c.send()
    c.recv(k, "unknownChain", group=g2)
    c.recv(k)


@sk_scenario("a distribution naming a chain already held is ignored and does not move the start iteration "
             "(neither an earlier nor a later one); messages below the first start stay messageKeyUnavailable",
             iteration=10)
def _(c):
    earlier = SenderChain(c.chain_key, c.signing_seed, c.group, c.sender_enc)
    earlier.advance_to(4)
    later = SenderChain(c.chain_key, c.signing_seed, c.group, c.sender_enc)
    later.advance_to(20)
    older = SenderChain(c.chain_key, c.signing_seed, c.group, c.sender_enc)
    older.advance_to(6)
    m6 = older.forge(c.pt())
    c.more_distribution(earlier.distribution(), "ignored")
    c.more_distribution(later.distribution(), "ignored")
    c.more_distribution(c.distribution, "ignored")
    other_key = replace(c.distribution, len(c.distribution) - 32, ed25519_pub(c.aux.bytes(32)))
    c.more_distribution(other_key, "ignored")
    s = [c.send() for _ in range(12)]
    c.raw(m6, "messageKeyUnavailable")
    c.recv(s[0])
    c.recv(s[11])
    c.recv(s[5])


@sk_scenario("a distribution whose signing key is not a valid point is invalidKey (small order, non-canonical, "
             "mixed order, not on the curve); nothing is stored")
def _(c):
    other = SenderChain(c.aux.bytes(32), c.aux.bytes(32), c.group, c.sender_enc)
    d = other.distribution()
    from generate_basic import decode_point, ed_add, encode_point, torsion_points
    torsion = torsion_points()
    small = encode_point(torsion[1])                       # order 8
    noncanon = (P + 3).to_bytes(32, "little")
    mixed = encode_point(ed_add(decode_point(ed25519_pub(c.aux.bytes(32))), torsion[2]))
    for key, what in ((bytes(32), "y = 0"), (b"\x01" + bytes(31), "identity"), (small, "order 8"),
                      (noncanon, "y = p + 3"), (mixed, "mixed order")):
        assert not sp.ed25519_point_is_valid(key), what
        c.more_distribution(d[:-32] + key, "invalidKey")
    y = 2
    while sp._recover_x(y, 0) is not None:
        y += 1
    c.more_distribution(d[:-32] + y.to_bytes(32, "little"), "invalidKey")
    c.raw(other.encrypt(c.pt()), "unknownChain")
    c.recv(c.send())


@sk_scenario("malformed distributions: empty, short, long, group length 0 or inconsistent are invalidMessage; "
             "version 1's type 0x10 and other type bytes are unsupportedVersion (checked first)")
def _(c):
    other = SenderChain(c.aux.bytes(32), c.aux.bytes(32), c.group, c.sender_enc)
    d = other.distribution()
    c.more_distribution(b"", "invalidMessage")
    c.more_distribution(d[:1], "invalidMessage")
    c.more_distribution(d[:-1], "invalidMessage")
    c.more_distribution(d + b"\x00", "invalidMessage")
    c.more_distribution(d[:1] + b"\x00" + d[2 + len(c.group):], "invalidMessage")
    c.more_distribution(replace(d, 1, bytes([(len(c.group) % 255) + 1])), "invalidMessage")
    c.more_distribution(b"\x10" + d[1:], "unsupportedVersion")
    c.more_distribution(b"\x10" + d[2 + len(c.group):], "unsupportedVersion")   # a version-1-shaped body
    c.more_distribution(b"\x24" + d[1:], "unsupportedVersion")
    c.more_distribution(b"\xff" + d[1:10], "unsupportedVersion")
    c.raw(other.encrypt(c.pt()), "unknownChain")
    c.recv(c.send())


@sk_scenario("a second chain of the same sender (a new chain after a member left) is stored next to the first; "
             "messages of both chains are checked against their own signing keys", iteration=1)
def _(c):
    new = SenderChain(c.aux.bytes(32), c.aux.bytes(32), c.group, c.sender_enc)
    new.advance_to(3)
    c.more_distribution(new.distribution())
    m_new = new.encrypt(c.pt())
    c.raw(sign_message(c.group, c.sender_enc, m_new[:-64], c.signing_seed), "invalidSignature")
    c.raw(flip(m_new, 80, 0), "invalidSignature")
    c.recv(c.send())
    c.raw(flip(m_new, 33, 0), "invalidSignature")


def sk_limits_scenario():
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


sk_limits_scenario()


def build_sender_key(seed: int) -> list:
    tests = []
    for i, (comment, kw, fn) in enumerate(SK_SCENARIOS, start=1):
        c = SenderKeyCase(seed, i, comment, **kw)
        fn(c)
        tests.append(c.to_json())
    return tests


# =====================================================================================
def test_lines(t: dict) -> list:
    """One test as lines: its header and one event per line (the hex dominates; write_suite's
    indentation would waste space)."""
    head = json.dumps({k: v for k, v in t.items() if k != "events"})
    lines = ["  " + head[:-1] + ', "events": [']
    ev = t["events"]
    lines.extend("   " + json.dumps(e) + ("," if j + 1 < len(ev) else "")
                 for j, e in enumerate(ev))
    lines.append("  ]}")
    return lines


def write_suite_lines(out_dir: str, base: str, suite: str, source: str, tests: list) -> list:
    """Write the §8 protocol-file objects, split into base.json, base_2.json, ... so that each
    file stays under FILE_BUDGET bytes; ids continue across the files. Returns [(name, n, size)]."""
    chunks, cur, size = [], [], 0
    for t in tests:
        lines = test_lines(t)
        n = sum(len(x.encode()) + 2 for x in lines)
        if cur and size + n > FILE_BUDGET:
            chunks.append(cur)
            cur, size = [], 0
        cur.append((t, lines))
        size += n
    chunks.append(cur)
    written = []
    for i, chunk in enumerate(chunks):
        name = f"{base}.json" if i == 0 else f"{base}_{i + 1}.json"
        src = source + ("" if len(chunks) == 1 else f"; ids continue across the {base}*.json files")
        out = ["{", f' "schema": {json.dumps(SCHEMA)},', f' "suite": {json.dumps(suite)},',
               f' "source": {json.dumps(src)},', ' "tests": [']
        for j, (t, lines) in enumerate(chunk):
            out.extend(lines[:-1] + [lines[-1] + ("," if j + 1 < len(chunk) else "")])
        out += [" ]", "}"]
        path = os.path.join(out_dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(out) + "\n")
        with open(path, encoding="utf-8") as f:
            assert json.load(f) == {"schema": SCHEMA, "suite": suite, "source": src, "tests": [t for t, _ in chunk]}
        sz = os.path.getsize(path)
        assert sz < 1_000_000, (name, sz)
        written.append((name, len(chunk), sz))
    return written


def message_layer_outcome(m: bytes) -> str | None:
    """SPEC §4/§9's checks before any key or session, restated from the text without ref_ratchet:
    type byte, lengths, flags (bits 3-7 reserved), the registration id's range, the inner type
    byte. Returns the error they decide, or None when the message passes them."""
    if len(m) == 0:
        return "invalidMessage"
    if m[0] == 0x21:
        return "invalidMessage" if len(m) < 41 + 16 else None
    if m[0] != 0x22:
        return "unsupportedVersion"
    if len(m) < 70:
        return "invalidMessage"
    flags = m[69]
    if flags & 0xF8:
        return "invalidMessage"
    end = 70 + 4 * (flags & 1) + 1092 * ((flags >> 1) & 1) + 4 * ((flags >> 2) & 1)
    if len(m) < end + 41 + 16:
        return "invalidMessage"
    if flags & 4 and not 1 <= int.from_bytes(m[end - 4:end], "big") <= 2**31 - 1:
        return "invalidMessage"
    return "unsupportedVersion" if m[end] != 0x21 else None


def check_message_layer(tests: list) -> int:
    """Every recv event the message layer decides must expect that error; no event it passes
    may expect unsupportedVersion (only that layer gives it). Returns the number it decided."""
    decided = 0
    for t in tests:
        sends = [bytes.fromhex(e["message"]) for e in t["events"] if e["op"] == "send"]
        for i, e in enumerate(t["events"]):
            if e["op"] != "recv":
                continue
            m = sends[e["send"]] if "send" in e else bytes.fromhex(e["message"])
            got, want = message_layer_outcome(m), e.get("error", "ok")
            if got is not None:
                decided += 1
                assert want in (got, "any"), f"ratchet test {t['id']} event {i}: message layer {got}, expected {want}"
            else:
                assert want != "unsupportedVersion", f"ratchet test {t['id']} event {i}"
    return decided


def main(seed: int = 1, out_dir: str = "TestVectors/protocol", verbose: bool = True) -> list:
    os.makedirs(out_dir, exist_ok=True)
    sp.run_self_checks(seed)
    ratchet = build_ratchet(seed)
    for t in ratchet:
        replay_ratchet(t)
    assert check_message_layer(ratchet) >= 64
    sender_key = build_sender_key(seed)
    for t in sender_key:
        replay_sender_key(t)
    written = write_suite_lines(out_dir, "ratchet", "ratchet", SOURCE_RATCHET + f", seed {seed}", ratchet)
    written += write_suite_lines(out_dir, "sender_key", "sender-key", SOURCE_SENDER_KEY + f", seed {seed}", sender_key)
    if verbose:
        for name, n, size in written:
            print(f"{name:32} {n:4} tests {size:9} bytes")
    return written


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                   "..", "protocol")))
    args = ap.parse_args()
    main(args.seed, args.out)
