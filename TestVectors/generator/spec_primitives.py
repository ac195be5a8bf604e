"""Independent reference primitives for SPEC.md (version 2), used by the vector generators.

Built only on PyPI's `cryptography` package and plain Python integers; it shares
no code with the Swift library, so vectors it produces are an independent check.
XChaCha20-Poly1305 is HChaCha20 (written out here) + cryptography's ChaCha20Poly1305;
ML-KEM-768 lives in ref_mlkem.py.
"""
from __future__ import annotations

import hashlib
import hmac as _hmac
import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, x25519
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF as _HKDF

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = (-121665 * pow(121666, P - 2, P)) % P
ZERO32 = bytes(32)
FF32 = b"\xff" * 32
SCHEMA = "sessionkit-vectors/2"


class SpecError(Exception):
    """Raised with a SPEC §8 error name (e.g. SpecError('invalidKey'))."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


# ---------------------------------------------------------------- encodings
def u32(x: int) -> bytes:
    return struct.pack(">I", x)


def read_u32(b: bytes, off: int) -> int:
    return struct.unpack(">I", b[off:off + 4])[0]


# ---------------------------------------------------------------- hashes/KDFs
def sha256(m: bytes) -> bytes:
    return hashlib.sha256(m).digest()


def sha512(m: bytes) -> bytes:
    return hashlib.sha512(m).digest()


def hmac_sha256(k: bytes, m: bytes) -> bytes:
    h = __import__("cryptography.hazmat.primitives.hmac", fromlist=["HMAC"]).HMAC(k, hashes.SHA256())
    h.update(m)
    return h.finalize()


def hkdf(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
    return _HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def kdf_ck(ck: bytes) -> tuple[bytes, bytes]:
    """(mk, ck') = (HMAC(ck, 0x01), HMAC(ck, 0x02))"""
    return hmac_sha256(ck, b"\x01"), hmac_sha256(ck, b"\x02")


# ---------------------------------------------------------------- AEAD
def aead_seal(key: bytes, nonce: bytes, pt: bytes, aad: bytes) -> bytes:
    return AESGCM(key).encrypt(nonce, pt, aad)


def aead_open(key: bytes, nonce: bytes, ct: bytes, aad: bytes) -> bytes:
    from cryptography.exceptions import InvalidTag
    try:
        return AESGCM(key).decrypt(nonce, ct, aad)
    except InvalidTag:
        raise SpecError("invalidMessage")


# ---------------------------------------------------------------- XAEAD (§1): XChaCha20-Poly1305-IETF
_M32 = 0xFFFFFFFF


def _rotl32(v: int, c: int) -> int:
    return ((v << c) & _M32) | (v >> (32 - c))


def _quarter_round(s: list, a: int, b: int, c: int, d: int) -> None:
    s[a] = (s[a] + s[b]) & _M32
    s[d] = _rotl32(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & _M32
    s[b] = _rotl32(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & _M32
    s[d] = _rotl32(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & _M32
    s[b] = _rotl32(s[b] ^ s[c], 7)


def hchacha20(key: bytes, nonce16: bytes) -> bytes:
    """HChaCha20 (draft-irtf-cfrg-xchacha §2.2): 20 ChaCha rounds over constants || key ||
    nonce, output words 0-3 and 12-15 (no feed-forward addition)."""
    assert len(key) == 32 and len(nonce16) == 16
    s = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    s += list(struct.unpack("<8I", key)) + list(struct.unpack("<4I", nonce16))
    for _ in range(10):
        _quarter_round(s, 0, 4, 8, 12)
        _quarter_round(s, 1, 5, 9, 13)
        _quarter_round(s, 2, 6, 10, 14)
        _quarter_round(s, 3, 7, 11, 15)
        _quarter_round(s, 0, 5, 10, 15)
        _quarter_round(s, 1, 6, 11, 12)
        _quarter_round(s, 2, 7, 8, 13)
        _quarter_round(s, 3, 4, 9, 14)
    return struct.pack("<8I", *(s[0:4] + s[12:16]))


def _xchacha_parts(key: bytes, nonce: bytes):
    if len(key) != 32 or len(nonce) != 24:
        raise SpecError("invalidMessage")
    return ChaCha20Poly1305(hchacha20(key, nonce[:16])), b"\x00" * 4 + nonce[16:24]


def xaead_seal(key: bytes, nonce: bytes, pt: bytes, aad: bytes) -> bytes:
    """XChaCha20-Poly1305-IETF = ChaCha20-Poly1305 (RFC 8439) under the key HChaCha20(key,
    nonce[0:16]) with the 12-byte nonce 0x00000000 || nonce[16:24]; tag appended."""
    aead, n12 = _xchacha_parts(key, nonce)
    return aead.encrypt(n12, pt, aad)


def xaead_open(key: bytes, nonce: bytes, ct: bytes, aad: bytes) -> bytes:
    from cryptography.exceptions import InvalidTag
    aead, n12 = _xchacha_parts(key, nonce)
    if len(ct) < 16:
        raise SpecError("invalidMessage")
    try:
        return aead.decrypt(n12, ct, aad)
    except InvalidTag:
        raise SpecError("invalidMessage")


def xaead_self_check(wycheproof_dir: str) -> dict:
    """HChaCha20 KAT (draft-irtf-cfrg-xchacha-03 §2.2.1) and every Wycheproof
    xchacha20_poly1305 test: valid ones must match, invalid ones (modified tags, nonces that
    are not 24 bytes) must be refused."""
    import json
    import os
    sub = hchacha20(bytes(range(32)), bytes.fromhex("000000090000004a0000000031415927"))
    assert sub.hex() == "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc", "HChaCha20 KAT"
    with open(os.path.join(wycheproof_dir, "xchacha20_poly1305_test.json")) as f:
        d = json.load(f)
    assert d["algorithm"] == "XCHACHA20-POLY1305"
    counts = {"valid": 0, "invalid": 0}
    for g in d["testGroups"]:
        for t in g["tests"]:
            key, iv, aad, msg, ct, tag = (bytes.fromhex(t[k]) for k in ("key", "iv", "aad", "msg", "ct", "tag"))
            if t["result"] == "valid":
                assert len(iv) == 24
                assert xaead_seal(key, iv, msg, aad) == ct + tag, f"xchacha tcId {t['tcId']}"
                assert xaead_open(key, iv, ct + tag, aad) == msg, f"xchacha tcId {t['tcId']}"
                counts["valid"] += 1
            else:
                assert t["result"] == "invalid"
                try:
                    xaead_open(key, iv, ct + tag, aad)
                    raise AssertionError(f"xchacha tcId {t['tcId']} accepted")
                except SpecError:
                    pass
                counts["invalid"] += 1
    return counts


# ---------------------------------------------------------------- padding (§2)
BUCKETS = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
# The first padded byte is a content type (§2): 0x01 application content (every plaintext
# unless said otherwise), 0x02 a sender-key distribution (§5) inside a pairwise session.
# Other values are reserved: unpadding refuses them whatever type it expects.
CONTENT_APPLICATION = 0x01
CONTENT_SENDER_KEY_DISTRIBUTION = 0x02
CONTENT_TYPES = (CONTENT_APPLICATION, CONTENT_SENDER_KEY_DISTRIBUTION)


def pad(pt: bytes, content_type: int = CONTENT_APPLICATION) -> bytes:
    assert content_type in CONTENT_TYPES, content_type
    n = len(pt)
    need = n + 5
    total = next((b for b in BUCKETS if b >= need), None)
    if total is None:
        total = -(-need // 65536) * 65536
    z = total - n - 5
    return bytes([content_type]) + pt + bytes(z) + u32(z)


def unpad(padded: bytes, content_type: int = CONTENT_APPLICATION) -> bytes:
    """§2 unpadding, expecting `content_type` as the first byte (another type is invalidPadding)."""
    assert content_type in CONTENT_TYPES, content_type
    if len(padded) < 5 or padded[0] != content_type:
        raise SpecError("invalidPadding")
    zl = read_u32(padded, len(padded) - 4)
    if zl > len(padded) - 5:
        raise SpecError("invalidPadding")
    return padded[1:len(padded) - 4 - zl]


# ---------------------------------------------------------------- X25519
def x25519_pub(sk: bytes) -> bytes:
    return x25519.X25519PrivateKey.from_private_bytes(sk).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def dh(sk: bytes, pk: bytes) -> bytes:
    """X25519; all-zero output raises invalidKey (cryptography raises ValueError)."""
    try:
        out = x25519.X25519PrivateKey.from_private_bytes(sk).exchange(
            x25519.X25519PublicKey.from_public_bytes(pk))
    except ValueError:
        raise SpecError("invalidKey")
    if out == ZERO32:
        raise SpecError("invalidKey")
    return out


def is_canonical_x25519(pk: bytes) -> bool:
    return len(pk) == 32 and pk[31] & 0x80 == 0 and int.from_bytes(pk, "little") < P


def encode_x25519(pk: bytes) -> bytes:
    return b"\x05" + pk


def encode_kem(ek: bytes) -> bytes:
    """EncodeKEM(ek) = 0x0B || ek (SPEC §1)."""
    return b"\x0b" + ek


def encode_address(uid: str, device_id: int) -> bytes:
    """Encode(address) = u8(len(uid)) || uid (UTF-8, 1-255 bytes) || u32(device_id)."""
    u = uid.encode("utf-8")
    assert 1 <= len(u) <= 255 and 0 <= device_id <= 0xFFFFFFFF
    return bytes([len(u)]) + u + u32(device_id)


def address_json(uid: str, device_id: int) -> dict:
    return {"uid": uid, "device_id": device_id}


def encode_address_json(a: dict) -> bytes:
    return encode_address(a["uid"], a["device_id"])


ADDRESS_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789-_.@+"


def random_address(dr: "Drbg") -> dict:
    n = 1 + dr.int_below(24)
    uid = "".join(ADDRESS_ALPHABET[b % len(ADDRESS_ALPHABET)] for b in dr.bytes(n))
    return address_json(uid, dr.int_below(2**32) if dr.int_below(2) else 1 + dr.int_below(8))


def encode_group(gid: bytes) -> bytes:
    """Encode(group) = u8(len(gid)) || gid, 1-255 bytes."""
    assert 1 <= len(gid) <= 255
    return bytes([len(gid)]) + gid


# ---------------------------------------------------------------- Ed25519
def ed25519_pub(seed: bytes) -> bytes:
    return ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def ed25519_sign(seed: bytes, msg: bytes) -> bytes:
    return ed25519.Ed25519PrivateKey.from_private_bytes(seed).sign(msg)


def ed25519_verify(pk: bytes, sig: bytes, msg: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    try:
        ed25519.Ed25519PublicKey.from_public_bytes(pk).verify(sig, msg)
        return True
    except (InvalidSignature, ValueError):
        return False


# ---------------------------------------------------------------- Edwards point validation (plain integers)
def _edwards_add(p1, p2):
    (x1, y1), (x2, y2) = p1, p2
    t = D * x1 * x2 * y1 * y2 % P
    x3 = (x1 * y2 + x2 * y1) * pow(1 + t, P - 2, P) % P
    y3 = (y1 * y2 + x1 * x2) * pow(1 - t, P - 2, P) % P
    return (x3, y3)


def _edwards_mul(k: int, pt):
    r = (0, 1)
    while k:
        if k & 1:
            r = _edwards_add(r, pt)
        pt = _edwards_add(pt, pt)
        k >>= 1
    return r


def _recover_x(y: int, sign: int):
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P != 0:
        x = x * pow(2, (P - 1) // 4, P) % P
    if (x * x - x2) % P != 0:
        return None
    if x & 1 != sign:
        x = P - x
    return x


def ed25519_point_is_valid(pk: bytes) -> bool:
    """libsodium's crypto_core_ed25519_is_valid_point: canonical y, on curve,
    not of small order, in the prime-order subgroup."""
    if len(pk) != 32:
        return False
    y = int.from_bytes(pk, "little") & ((1 << 255) - 1)
    sign = pk[31] >> 7
    if y >= P:
        return False
    x = _recover_x(y, sign)
    if x is None:
        return False
    pt = (x, y)
    if _ext_is_identity(_ext_mul(8, pt)):
        return False  # small order
    if not _ext_is_identity(_ext_mul(L, pt)):
        return False  # not in the prime-order subgroup (mixed order)
    return True


# Extended homogeneous coordinates (RFC 8032 §5.1.4 formulas, complete for
# a = -1 and non-square d); about 20x faster than the affine helpers above,
# which remain as an independent cross-check.
def _ext_add(p1, p2):
    x1, y1, z1, t1 = p1
    x2, y2, z2, t2 = p2
    a = (y1 - x1) * (y2 - x2) % P
    b = (y1 + x1) * (y2 + x2) % P
    c = 2 * t1 * t2 * D % P
    d = 2 * z1 * z2 % P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _ext_mul(k: int, pt):
    """k * (x, y) for an affine point; returns extended coordinates."""
    x, y = pt
    q = (x % P, y % P, 1, x * y % P)
    r = (0, 1, 1, 0)
    while k:
        if k & 1:
            r = _ext_add(r, q)
        q = _ext_add(q, q)
        k >>= 1
    return r


def _ext_is_identity(p) -> bool:
    x, y, z, _ = p
    return x % P == 0 and (y - z) % P == 0


def _ext_to_affine(p):
    x, y, z, _ = p
    zi = pow(z, P - 2, P)
    return (x * zi % P, y * zi % P)


# ---------------------------------------------------------------- conversions (§1)
def ed_to_x_public(ed_pk: bytes) -> bytes:
    if not ed25519_point_is_valid(ed_pk):
        raise SpecError("invalidKey")
    y = int.from_bytes(ed_pk, "little") & ((1 << 255) - 1)
    u = (1 + y) * pow((1 - y) % P, P - 2, P) % P
    return u.to_bytes(32, "little")


def ed_seed_to_x_private(seed: bytes) -> bytes:
    h = bytearray(sha512(seed)[:32])
    h[0] &= 248
    h[31] &= 127
    h[31] |= 64
    return bytes(h)


def x_to_ed_public(x_pk: bytes) -> bytes:
    u = (int.from_bytes(x_pk, "little") & ((1 << 255) - 1)) % P
    y = (u - 1) * pow((u + 1) % P, P - 2, P) % P
    return y.to_bytes(32, "little")  # sign bit 0


def write_suite(path: str, suite: str, source: str, tests: list) -> None:
    import json
    with open(path, "w") as f:
        json.dump({"schema": SCHEMA, "suite": suite, "source": source, "tests": tests}, f, indent=1)
        f.write("\n")


def find_wycheproof() -> str:
    """The folder with the Wycheproof files the self-checks read: $SESSIONKIT_WYCHEPROOF,
    else TestVectors/wycheproof/ next to this generator, else /work/shared/vectors/wycheproof."""
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    cands = [os.environ.get("SESSIONKIT_WYCHEPROOF", ""), os.path.join(here, "..", "wycheproof"),
             "/work/shared/vectors/wycheproof"]
    for c in cands:
        if c and all(os.path.exists(os.path.join(c, n)) for n in
                     ("xchacha20_poly1305_test.json", "mlkem_768_test.json", "mlkem_768_encaps_test.json")):
            return os.path.normpath(c)
    raise SystemExit("Wycheproof files for the ML-KEM / XChaCha20-Poly1305 self-checks not found "
                     "(set SESSIONKIT_WYCHEPROOF to a folder holding them)")


_SELF_CHECKED: dict = {}


def run_self_checks(seed: int) -> dict:
    """The primitive self-checks that every generation run starts with (once per process):
    XChaCha20-Poly1305 (HChaCha20 KAT + Wycheproof) and ML-KEM-768 (cryptography + Wycheproof)."""
    if seed not in _SELF_CHECKED:
        import ref_mlkem
        wy = find_wycheproof()
        _SELF_CHECKED[seed] = {"xchacha20-poly1305": xaead_self_check(wy),
                               "ml-kem-768": ref_mlkem.self_check(wy, Drbg(seed, "ml-kem-self-check"))}
    return _SELF_CHECKED[seed]


class Drbg:
    """Deterministic byte stream for reproducible vectors: SHA-256(seed || label || counter)."""

    def __init__(self, seed: int, label: str):
        self._prefix = f"sessionkit-vectors/{seed}/{label}/".encode()
        self._counter = 0

    def bytes(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            out += sha256(self._prefix + self._counter.to_bytes(8, "big"))
            self._counter += 1
        return out[:n]

    def int_below(self, bound: int) -> int:
        return int.from_bytes(self.bytes(8), "big") % bound
