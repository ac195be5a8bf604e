"""Independent reference of age's `mlkem768x25519` recipient type (C2SP age.md, "The
MLKEM768-X25519 (i.e. X-Wing) hybrid post-quantum recipient type"), for SessionKitMLKEM's
AgeHybridRecipient / AgeHybridIdentity.

* X-Wing (draft-connolly-cfrg-xwing-kem, the MLKEM768-X25519 KEM of draft-ietf-hpke-pq):
  the 32-byte identity is expanded with SHAKE-256 to 96 bytes, d || z for ML-KEM-768
  (ref_mlkem.keygen, written out from FIPS 203) and the X25519 secret; the public key is
  ek (1184) || X25519 public key (32); enc is the ML-KEM ciphertext (1088) || the X25519
  ephemeral share (32); the shared secret is SHA3-256(ss_M || ss_X || ct_X || pk_X || label),
  label = the 6 bytes \\.//^\\ .
* HPKE (RFC 9180) base mode, KEM 0x647a, HKDF-SHA-256 (0x0001), ChaCha20-Poly1305 (0x0003),
  info "age-encryption.org/mlkem768x25519", empty aad: the LabeledExtract / LabeledExpand key
  schedule written out here on the standard library's HMAC.
* The stanza `-> mlkem768x25519 <base64 enc>` with the 32-byte HPKE ciphertext as its body, and
  the identity's checks (one argument, canonical base64 of 1120 bytes, a 32-byte body, no
  all-zero X25519 secret).

Built on the standard library, PyPI `cryptography` (X25519, ChaCha20-Poly1305) and ref_mlkem /
ref_age of this folder; it shares no code with the Swift library. `self_check()` ties it to the
Go reference: the age.md example key pair, and every binary C2SP/CCTV vector with an
AGE-SECRET-KEY-PQ-1… identity (the outcome category, the file key and the header MAC).

Command line (for SessionKit's AgeHybridInteropTests):
    ref_age_pq.py keygen                      prints an identity and its recipient, one a line
    ref_age_pq.py encrypt RECIPIENT < in > out   a binary age file to one mlkem768x25519 recipient
    ref_age_pq.py decrypt IDENTITY < in > out    decrypts a binary age file (exit 1 on failure)
    ref_age_pq.py self-check                  runs self_check() and prints its counts
"""
from __future__ import annotations

import hashlib
import hmac
import os
import struct
import sys
from typing import Optional

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

import ref_age as ra
import ref_mlkem as mlkem
from spec_primitives import SpecError, dh, x25519_pub

STANZA_TYPE = "mlkem768x25519"
INFO = b"age-encryption.org/mlkem768x25519"
IDENTITY_HRP = "age-secret-key-pq-"
RECIPIENT_HRP = "age1pq"
XWING_LABEL = b"\\.//^\\"
PK_LEN = mlkem.EK_LEN + 32          # 1216
ENC_LEN = mlkem.CT_LEN + 32         # 1120
SUITE_ID = b"HPKE" + struct.pack(">HHH", 0x647A, 0x0001, 0x0003)

# The example of age.md.
SPEC_IDENTITY = "AGE-SECRET-KEY-PQ-1XX76JRALNLXDMEW0CRK45QMCCH4X06SE84UN3VPM33W6HWDX0H3SK3ZQFR"
SPEC_RECIPIENT_PREFIX = "age1pq1x34nzsvr0rxjsgdn8zgyhfe8j7ceq5r9rdelkjuh3y235jzxshfg87pzf5zrqtzdxz95paef6caq5"
SPEC_RECIPIENT_SUFFIX = "qmwze9pyyzk3tlhl53k2ykx3qheyty7saeq0d3fzv49zc0k"


# ---------------------------------------------------------------- X-Wing
def xwing_expand(seed: bytes) -> tuple[bytes, bytes, bytes, bytes]:
    """-> (ek_M, dk_M, sk_X, pk_X) of a 32-byte X-Wing seed."""
    assert len(seed) == 32
    expanded = hashlib.shake_256(seed).digest(96)
    ek_m, dk_m = mlkem.keygen(expanded[:64])
    sk_x = expanded[64:96]
    return ek_m, dk_m, sk_x, x25519_pub(sk_x)


def xwing_public_key(seed: bytes) -> bytes:
    ek_m, _, _, pk_x = xwing_expand(seed)
    return ek_m + pk_x


def _combine(ss_m: bytes, ss_x: bytes, ct_x: bytes, pk_x: bytes) -> bytes:
    return hashlib.sha3_256(ss_m + ss_x + ct_x + pk_x + XWING_LABEL).digest()


def xwing_encaps(pk: bytes, eseed: bytes) -> tuple[bytes, bytes]:
    """-> (shared secret, enc) with the 64 bytes of randomness eseed = m (ML-KEM) || ephemeral
    X25519 secret. ValueError for a public key that is not 1216 bytes or whose ek fails FIPS
    203's check."""
    if len(pk) != PK_LEN:
        raise ValueError("X-Wing public key length")
    ek_m, pk_x = pk[:mlkem.EK_LEN], pk[mlkem.EK_LEN:]
    ss_m, ct_m = mlkem.encaps(ek_m, eseed[:32])
    ek_x = eseed[32:64]
    ct_x = x25519_pub(ek_x)
    ss_x = dh(ek_x, pk_x)
    return _combine(ss_m, ss_x, ct_x, pk_x), ct_m + ct_x


def xwing_decaps(seed: bytes, enc: bytes) -> bytes:
    """The shared secret; SpecError("invalidKey") when the X25519 secret is all zeros."""
    _, dk_m, sk_x, pk_x = xwing_expand(seed)
    ct_m, ct_x = enc[:mlkem.CT_LEN], enc[mlkem.CT_LEN:]
    ss_m = mlkem.decaps(dk_m, ct_m)
    ss_x = dh(sk_x, ct_x)
    return _combine(ss_m, ss_x, ct_x, pk_x)


# ---------------------------------------------------------------- HPKE (RFC 9180), base mode
def _extract(salt: bytes, ikm: bytes) -> bytes:
    return hmac.new(salt, ikm, hashlib.sha256).digest()


def _expand(prk: bytes, info: bytes, length: int) -> bytes:
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def _labeled_extract(salt: bytes, label: bytes, ikm: bytes) -> bytes:
    return _extract(salt, b"HPKE-v1" + SUITE_ID + label + ikm)


def _labeled_expand(prk: bytes, label: bytes, info: bytes, length: int) -> bytes:
    return _expand(prk, struct.pack(">H", length) + b"HPKE-v1" + SUITE_ID + label + info, length)


def hpke_key_schedule(shared_secret: bytes, info: bytes) -> tuple[bytes, bytes]:
    """-> (key, base_nonce) of KeySchedule(mode_base, shared_secret, info, "", "")."""
    psk_id_hash = _labeled_extract(b"", b"psk_id_hash", b"")
    info_hash = _labeled_extract(b"", b"info_hash", info)
    context = b"\x00" + psk_id_hash + info_hash
    secret = _labeled_extract(shared_secret, b"secret", b"")
    return _labeled_expand(secret, b"key", context, 32), _labeled_expand(secret, b"base_nonce", context, 12)


# ---------------------------------------------------------------- the age stanza
def wrap(file_key: bytes, pk: bytes, eseed: bytes) -> tuple[list, bytes]:
    """-> (arguments, body) of an mlkem768x25519 stanza: HPKE SealBase of the file key."""
    shared, enc = xwing_encaps(pk, eseed)
    key, nonce = hpke_key_schedule(shared, INFO)
    return [STANZA_TYPE, ra.b64(enc)], ChaCha20Poly1305(key).encrypt(nonce, file_key, b"")


def unwrap(args: list, body: bytes, seed: bytes) -> Optional[bytes]:
    """The file key, or None when the stanza is of another type or for another key; ValueError
    (a header failure) for a malformed mlkem768x25519 stanza or an all-zero X25519 secret."""
    if args[0] != STANZA_TYPE:
        return None
    if len(args) != 2:
        raise ValueError("mlkem768x25519 stanza arguments")
    enc = ra.unb64(args[1])
    if len(enc) != ENC_LEN or len(body) != 32:
        raise ValueError("mlkem768x25519 stanza lengths")
    try:
        shared = xwing_decaps(seed, enc)
    except SpecError:
        raise ValueError("mlkem768x25519 all-zero X25519 secret")
    key, nonce = hpke_key_schedule(shared, INFO)
    try:
        return ChaCha20Poly1305(key).decrypt(nonce, body, b"")
    except InvalidTag:
        return None


def identity_string(seed: bytes) -> str:
    return ra.bech32_encode(IDENTITY_HRP, seed, upper=True)


def recipient_string(seed: bytes) -> str:
    return ra.bech32_encode(RECIPIENT_HRP, xwing_public_key(seed))


def parse_identity(text: str) -> bytes:
    hrp, seed = ra.bech32_decode(text)
    if text != text.upper() or hrp != IDENTITY_HRP or len(seed) != 32:
        raise ValueError("not an AGE-SECRET-KEY-PQ-1… identity")
    return seed


def parse_recipient(text: str) -> bytes:
    hrp, pk = ra.bech32_decode(text)
    if text != text.lower() or hrp != RECIPIENT_HRP or len(pk) != PK_LEN:
        raise ValueError("not an age1pq1… recipient")
    return pk


def open_header(data: bytes, seed: bytes) -> tuple[bytes, bytes]:
    """-> (file key, payload) of a binary age file for this identity. ValueError("header …"),
    ("no match") or ("HMAC …") in CCTV's categories."""
    try:
        stanzas, head, mac, payload = ra.parse_age_file(data)
    except (ValueError, IndexError, UnicodeDecodeError) as e:
        raise ValueError(f"header failure: {e}")
    file_key = None
    for args, body in stanzas:
        try:
            file_key = unwrap(args, body, seed)
        except ValueError as e:
            raise ValueError(f"header failure: {e}")
        if file_key is not None:
            break
    if file_key is None:
        raise ValueError("no match")
    if not hmac.compare_digest(ra.header_mac(file_key, head), mac):
        raise ValueError("HMAC failure")
    return file_key, payload


def encrypt(recipient: str, plaintext: bytes) -> bytes:
    file_key = os.urandom(16)
    stanza = wrap(file_key, parse_recipient(recipient), os.urandom(64))
    nonce = os.urandom(ra.NONCE_LEN)
    return ra.age_file(file_key, [stanza], nonce + ra.stream_seal(ra.payload_key(file_key, nonce), plaintext))


def decrypt(identity: str, data: bytes) -> bytes:
    file_key, payload = open_header(data, parse_identity(identity))
    return ra.payload_open(file_key, payload)


# ---------------------------------------------------------------- self-check
def self_check(folder: Optional[str] = None) -> dict:
    """1. The age.md example identity gives the age.md example recipient (its start and end as
       printed there).
    2. Every binary CCTV vector with an AGE-SECRET-KEY-PQ-1… identity: the outcome category
       (success, no match, header failure), the file key of `file key`, the header MAC and, for
       a success, the payload hash.
    3. A round trip of wrap / unwrap, and another identity gets None."""
    import zlib
    seed = parse_identity(SPEC_IDENTITY)
    recipient = recipient_string(seed)
    assert recipient.startswith(SPEC_RECIPIENT_PREFIX) and recipient.endswith(SPEC_RECIPIENT_SUFFIX), recipient[:90]
    assert identity_string(seed) == SPEC_IDENTITY
    counts = {"success": 0, "no match": 0, "header failure": 0}
    folder = folder or ra._cctv_dir()
    if folder is not None:
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if not os.path.isfile(path) or name.endswith(".md"):
                continue
            head, _, body = open(path, "rb").read().partition(b"\n\n")
            fields, identities = {}, []
            for ln in head.decode("utf-8", "replace").split("\n"):
                k, _, v = ln.partition(": ")
                fields[k] = v
                if k == "identity":
                    identities.append(v)
            pq = [i for i in identities if i.startswith("AGE-SECRET-KEY-PQ-1")]
            if not pq or fields.get("armored") or len(identities) != 1:
                continue
            if fields.get("compressed") == "zlib":
                body = zlib.decompress(body)
            try:
                file_key, payload = open_header(body, parse_identity(pq[0]))
                outcome = "success"
                assert file_key.hex() == fields["file key"], name
                assert ra.sha256(ra.payload_open(file_key, payload)).hex() == fields["payload"], name
            except ValueError as e:
                outcome = str(e).split(":")[0]
            assert outcome == fields["expect"], (name, outcome, fields["expect"])
            counts[outcome] += 1
        assert sum(counts.values()) == 17, counts
    file_key = os.urandom(16)
    args, body = wrap(file_key, xwing_public_key(seed), os.urandom(64))
    assert unwrap(args, body, seed) == file_key
    assert unwrap(args, body, os.urandom(32)) is None
    return counts


def main(argv: list) -> int:
    command = argv[1] if len(argv) > 1 else ""
    if command == "keygen":
        seed = os.urandom(32)
        print(identity_string(seed))
        print(recipient_string(seed))
    elif command == "encrypt" and len(argv) == 3:
        sys.stdout.buffer.write(encrypt(argv[2], sys.stdin.buffer.read()))
    elif command == "decrypt" and len(argv) == 3:
        try:
            sys.stdout.buffer.write(decrypt(argv[2], sys.stdin.buffer.read()))
        except (ValueError, SpecError) as e:
            print(f"decrypt: {e}", file=sys.stderr)
            return 1
    elif command == "self-check":
        print(self_check())
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
