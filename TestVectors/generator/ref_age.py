"""Independent reference of SPEC.md §10 (attachments) and of the parts of the age v1 format
(C2SP age.md) it needs, plus the self-check that ties them to real age implementations.

* padded(n) of §10: b_0 = 512, b_(k+1) = b_k + max(1, b_k // 20); the smallest b_k >= n.
* The age v1 payload (age.md "Payload"): 16-byte nonce, payload key = HKDF-SHA-256(ikm = file
  key, salt = nonce, info = "payload"), 64 KiB chunks sealed with ChaCha20-Poly1305 under the
  12-byte nonce u88(counter) || flag (0x01 on the final chunk); the final chunk may be short,
  and is empty only when the whole plaintext is.
* The attachment pointer of §10: 0x28 || file_key (16) || SHA-256(ciphertext) (32) || u64(n).
* For the self-check only: the age v1 header with X25519 recipient stanzas (age.md "Header",
  "The X25519 recipient type"), Bech32 (BIP 173, no length limit) for AGE-SECRET-KEY-1… / age1…
  strings, canonical unpadded base64, and a reader for the C2SP/CCTV age test files.

Built only on the standard library and PyPI `cryptography` (ChaCha20Poly1305, X25519, HKDF,
HMAC); it shares no code with the Swift library. `self_check` decrypts complete age files built
here with PyPI `pyrage` (the Rust `age` crate) and with the `age` command (Go), decrypts age
files those two produced, and runs the CCTV X25519 vectors through this code.
"""
from __future__ import annotations

import base64
import hashlib
import os
import struct
from typing import Iterator, Optional

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from spec_primitives import SpecError, hkdf, hmac_sha256, sha256, x25519_pub, dh

# ---------------------------------------------------------------- SPEC §10: padded(n)
PAD_START = 512
U64_MAX = 2**64 - 1


def padded_length(n: int) -> int:
    """The smallest b_k >= n (b_0 = 512, b_(k+1) = b_k + max(1, b_k // 20)); invalidMessage when
    that would exceed 2^64 - 1 (SPEC §10)."""
    if n < 0:
        raise ValueError(n)
    b = PAD_START
    while b < n:
        b += max(1, b // 20)
        if b > U64_MAX:
            raise SpecError("invalidMessage")
    return b


def bucket_list(limit: int = U64_MAX) -> list:
    """Every b_k <= limit, in order (for the self-check and for choosing test lengths)."""
    out = [PAD_START]
    while True:
        nxt = out[-1] + max(1, out[-1] // 20)
        if nxt > limit:
            return out
        out.append(nxt)


# ---------------------------------------------------------------- age v1 payload (STREAM)
CHUNK = 64 * 1024
TAG = 16
ENC_CHUNK = CHUNK + TAG            # 65,552 bytes on the wire for a full chunk
NONCE_LEN = 16
FILE_KEY_LEN = 16


def payload_key(file_key: bytes, nonce: bytes) -> bytes:
    """age.md: payload key = HKDF-SHA-256(ikm = file key, salt = nonce, info = "payload")."""
    assert len(nonce) == NONCE_LEN
    return hkdf(nonce, file_key, b"payload", 32)


def chunk_nonce(counter: int, last: bool) -> bytes:
    """11-byte big-endian chunk counter || 0x01 for the final chunk, else 0x00."""
    assert 0 <= counter < 2**88
    return counter.to_bytes(11, "big") + (b"\x01" if last else b"\x00")


def chunk_sizes(length: int) -> list:
    """Plaintext sizes of the chunks age uses for `length` bytes: full 64 KiB chunks, the final
    one possibly shorter (never empty, except the single empty chunk of an empty plaintext)."""
    if length == 0:
        return [0]
    count = -(-length // CHUNK)
    return [CHUNK] * (count - 1) + [length - CHUNK * (count - 1)]


def payload_length(length: int) -> int:
    """Bytes of an age payload (nonce included) for a plaintext of `length` bytes."""
    return NONCE_LEN + length + TAG * max(1, -(-length // CHUNK))


def stream_seal(key: bytes, plaintext: bytes) -> bytes:
    aead = ChaCha20Poly1305(key)
    sizes = chunk_sizes(len(plaintext))
    out, off = [], 0
    for i, size in enumerate(sizes):
        out.append(aead.encrypt(chunk_nonce(i, i == len(sizes) - 1), plaintext[off:off + size], None))
        off += size
    assert off == len(plaintext)
    return b"".join(out)


def payload_seal(file_key: bytes, nonce: bytes, plaintext: bytes) -> bytes:
    """nonce || STREAM chunks."""
    return nonce + stream_seal(payload_key(file_key, nonce), plaintext)


def stream_open_chunks(key: bytes, data: bytes) -> Iterator[bytes]:
    """Streaming STREAM decryption without knowing the length in advance, as the Go age reader
    does: yields each chunk's plaintext once it has authenticated and raises
    SpecError('invalidMessage') at the first failure (what was yielded before stays released).
    A full 65,552-byte chunk is tried as non-final, then as final; a shorter one only as final;
    an empty final chunk is allowed only as the first; data after a final chunk, or the end of
    the data before a final chunk, is an error. (The CCTV vectors pin what is released.)"""
    aead = ChaCha20Poly1305(key)
    pos, counter = 0, 0
    while True:
        rest = len(data) - pos
        if rest == 0 and counter > 0:
            raise SpecError("invalidMessage")        # the stream ended without a final chunk
        if rest < TAG:
            raise SpecError("invalidMessage")        # a chunk shorter than a tag
        enc = data[pos:pos + ENC_CHUNK]
        last = False
        try:
            if len(enc) < ENC_CHUNK:
                raise InvalidTag()
            pt = aead.decrypt(chunk_nonce(counter, False), enc, None)
        except InvalidTag:
            try:
                pt = aead.decrypt(chunk_nonce(counter, True), enc, None)
            except InvalidTag:
                raise SpecError("invalidMessage")    # bad tag (or not marked final at the end)
            last = True
        if last and len(pt) == 0 and counter > 0:
            raise SpecError("invalidMessage")        # an empty final chunk after other chunks
        yield pt
        pos += len(enc)
        counter += 1
        if last:
            if pos != len(data):
                raise SpecError("invalidMessage")    # data after the final chunk
            return


def payload_open(file_key: bytes, payload: bytes) -> bytes:
    """Whole-payload decryption with the streaming rules (used for age files of unknown length)."""
    if len(payload) < NONCE_LEN:
        raise SpecError("invalidMessage")
    return b"".join(stream_open_chunks(payload_key(file_key, payload[:NONCE_LEN]), payload[NONCE_LEN:]))


# ---------------------------------------------------------------- SPEC §10: attachments
POINTER_TYPE = 0x28
POINTER_LEN = 1 + FILE_KEY_LEN + 32 + 8        # 57


def encode_pointer(file_key: bytes, digest: bytes, n: int) -> bytes:
    assert len(file_key) == FILE_KEY_LEN and len(digest) == 32 and 0 <= n <= U64_MAX
    return bytes([POINTER_TYPE]) + file_key + digest + struct.pack(">Q", n)


def decode_pointer(data: bytes) -> tuple[bytes, bytes, int]:
    """SPEC §10: empty -> invalidPayload; another first byte -> unsupportedVersion; another
    length -> invalidPayload. -> (file_key, SHA-256 of the ciphertext, n)."""
    if len(data) == 0:
        raise SpecError("invalidPayload")
    if data[0] != POINTER_TYPE:
        raise SpecError("unsupportedVersion")
    if len(data) != POINTER_LEN:
        raise SpecError("invalidPayload")
    return data[1:17], data[17:49], struct.unpack(">Q", data[49:57])[0]


def attachment_encrypt(file_key: bytes, nonce: bytes, content: bytes) -> tuple[bytes, bytes]:
    """-> (ciphertext, pointer): the content padded with zero bytes to padded(n), sealed as an
    age v1 payload (no header), and the 57-byte pointer."""
    padded = content + bytes(padded_length(len(content)) - len(content))
    ct = payload_seal(file_key, nonce, padded)
    assert len(ct) == payload_length(len(padded))
    return ct, encode_pointer(file_key, sha256(ct), len(content))


def attachment_decrypt(pointer: bytes, ciphertext: bytes) -> bytes:
    """The receiver of SPEC §10: pointer decoding (invalidPayload / unsupportedVersion), then
    padded(n) (invalidMessage beyond 2^64 - 1), the exact length of an age payload of padded(n)
    bytes, the SHA-256 digest, and every chunk at its known position with its known final flag
    (invalidMessage for all of these). Releases the first n bytes; the padding is not checked."""
    file_key, digest, n = decode_pointer(pointer)
    padded = padded_length(n)
    if len(ciphertext) != payload_length(padded):
        raise SpecError("invalidMessage")
    if sha256(ciphertext) != digest:
        raise SpecError("invalidMessage")
    aead = ChaCha20Poly1305(payload_key(file_key, ciphertext[:NONCE_LEN]))
    sizes = chunk_sizes(padded)
    out, pos = [], NONCE_LEN
    for i, size in enumerate(sizes):
        try:
            out.append(aead.decrypt(chunk_nonce(i, i == len(sizes) - 1), ciphertext[pos:pos + size + TAG], None))
        except InvalidTag:
            raise SpecError("invalidMessage")
        pos += size + TAG
    assert pos == len(ciphertext)
    return b"".join(out)[:n]


def content_from_seed(seed: bytes, length: int) -> bytes:
    """SPEC §8 `content_seed`: the first `length` bytes of SHA-256(seed || u64(i)), i = 0, 1, …"""
    out = bytearray()
    i = 0
    while len(out) < length:
        out += hashlib.sha256(seed + struct.pack(">Q", i)).digest()
        i += 1
    return bytes(out[:length])


# ---------------------------------------------------------------- age v1 header (self-check only)
_B32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


def _polymod(values) -> int:
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= _GEN[i] if (top >> i) & 1 else 0
    return chk


def _hrp_expand(hrp: str) -> list:
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def _convertbits(data, frombits: int, tobits: int, pad: bool) -> list:
    acc = bits = 0
    out = []
    maxv = (1 << tobits) - 1
    for v in data:
        acc = (acc << frombits) | v
        bits += frombits
        while bits >= tobits:
            bits -= tobits
            out.append((acc >> bits) & maxv)
    if pad:
        if bits:
            out.append((acc << (tobits - bits)) & maxv)
    elif bits >= frombits or ((acc << (tobits - bits)) & maxv):
        raise ValueError("bech32 padding")
    return out


def bech32_encode(hrp: str, data: bytes, upper: bool = False) -> str:
    hrp = hrp.lower()
    d5 = _convertbits(data, 8, 5, True)
    pm = _polymod(_hrp_expand(hrp) + d5 + [0] * 6) ^ 1
    s = hrp + "1" + "".join(_B32[v] for v in d5 + [(pm >> 5 * (5 - i)) & 31 for i in range(6)])
    return s.upper() if upper else s


def bech32_decode(s: str) -> tuple[str, bytes]:
    if s.lower() != s and s.upper() != s:
        raise ValueError("bech32 mixed case")
    s = s.lower()
    pos = s.rfind("1")
    hrp, d5 = s[:pos], [_B32.index(c) for c in s[pos + 1:]]
    if pos < 1 or len(d5) < 6 or _polymod(_hrp_expand(hrp) + d5) != 1:
        raise ValueError("bech32 checksum")
    return hrp, bytes(_convertbits(d5[:-6], 5, 8, False))


def identity_string(sk: bytes) -> str:
    return bech32_encode("age-secret-key-", sk, upper=True)


def recipient_string(sk: bytes) -> str:
    return bech32_encode("age", x25519_pub(sk))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode().rstrip("=")


def unb64(s: str) -> bytes:
    """Canonical unpadded base64 (age.md conventions): no '=', canonical trailing bits."""
    if "=" in s or "\n" in s or "\r" in s:
        raise ValueError("base64")
    data = base64.b64decode(s + "=" * (-len(s) % 4), validate=True)
    if b64(data) != s:
        raise ValueError("non-canonical base64")
    return data


X25519_INFO = b"age-encryption.org/v1/X25519"


def x25519_stanza(file_key: bytes, recipient_pk: bytes, ephemeral_sk: bytes) -> tuple[list, bytes]:
    """-> (arguments, body) of an X25519 recipient stanza (age.md)."""
    share = x25519_pub(ephemeral_sk)
    wrap_key = hkdf(share + recipient_pk, dh(ephemeral_sk, recipient_pk), X25519_INFO, 32)
    return ["X25519", b64(share)], ChaCha20Poly1305(wrap_key).encrypt(bytes(12), file_key, None)


def x25519_unwrap(args: list, body: bytes, identity_sk: bytes) -> Optional[bytes]:
    """The file key, or None when the stanza is not for this identity; ValueError for a malformed
    X25519 stanza."""
    if args[0] != "X25519":
        return None
    if len(args) != 2:
        raise ValueError("X25519 stanza arguments")
    share = unb64(args[1])
    if len(share) != 32 or len(body) != 32:
        raise ValueError("X25519 stanza lengths")
    try:
        shared = dh(identity_sk, share)
    except SpecError:
        raise ValueError("X25519 low-order share")
    wrap_key = hkdf(share + x25519_pub(identity_sk), shared, X25519_INFO, 32)
    try:
        return ChaCha20Poly1305(wrap_key).decrypt(bytes(12), body, None)
    except InvalidTag:
        return None


def header_mac(file_key: bytes, header_to_dashes: bytes) -> bytes:
    """HMAC-SHA-256 with HKDF-SHA-256(ikm = file key, salt = empty, info = "header") over the
    header up to and including '---'."""
    return hmac_sha256(hkdf(b"", file_key, b"header", 32), header_to_dashes)


def age_file(file_key: bytes, stanzas: list, payload: bytes) -> bytes:
    """A complete binary age v1 file: header with the given (args, body) stanzas, MAC, payload."""
    lines = [b"age-encryption.org/v1\n"]
    for args, body in stanzas:
        lines.append(("-> " + " ".join(args) + "\n").encode())
        enc = b64(body)
        rows = [enc[i:i + 64] for i in range(0, len(enc), 64)]
        if not rows or len(rows[-1]) == 64:
            rows.append("")
        lines.append("".join(r + "\n" for r in rows).encode())
    head = b"".join(lines) + b"---"
    return head + b" " + b64(header_mac(file_key, head)).encode() + b"\n" + payload


def parse_age_file(data: bytes) -> tuple[list, bytes, bytes, bytes]:
    """-> (stanzas [(args, body)], header up to '---', mac, payload) of a binary age v1 file;
    ValueError for a malformed header."""
    pos = 0

    def line() -> str:
        nonlocal pos
        end = data.index(b"\n", pos)
        s = data[pos:end].decode("ascii")
        pos = end + 1
        return s

    if line() != "age-encryption.org/v1":
        raise ValueError("version line")
    stanzas = []
    while True:
        start = pos
        s = line()
        if s.startswith("---"):
            if not s.startswith("--- "):
                raise ValueError("MAC line")
            mac = unb64(s[4:])
            if len(mac) != 32:
                raise ValueError("MAC length")
            return stanzas, data[:start + 3], mac, data[pos:]
        if not s.startswith("-> "):
            raise ValueError("stanza line")
        args = s[3:].split(" ")
        if not args or any(a == "" for a in args):
            raise ValueError("stanza arguments")
        body = ""
        while True:
            row = line()
            if len(row) > 64:
                raise ValueError("body line too long")
            body += row
            if len(row) < 64:
                break
        stanzas.append((args, unb64(body) if body else b""))


def age_decrypt(data: bytes, identity_sk: bytes) -> bytes:
    """Decrypts a binary age v1 file for an X25519 identity: unwrap, header MAC, payload."""
    stanzas, head, mac, payload = parse_age_file(data)
    for args, body in stanzas:
        file_key = x25519_unwrap(args, body, identity_sk)
        if file_key is not None:
            break
    else:
        raise ValueError("no identity matched")
    if header_mac(file_key, head) != mac:
        raise ValueError("header MAC")
    return payload_open(file_key, payload)


# ---------------------------------------------------------------- self-check
def _cctv_dir() -> Optional[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    for c in (os.environ.get("SESSIONKIT_AGE_VECTORS", ""), os.path.join(here, "..", "age"),
              "/work/shared/vectors/age"):
        if c and os.path.exists(os.path.join(c, "x25519")):
            return os.path.normpath(c)
    return None


def check_cctv(folder: str) -> dict:
    """Every C2SP/CCTV age vector that is a binary (not armored) file for an X25519 identity and
    expects `success` or `payload failure`: the header is parsed, the stanza unwrapped and the MAC
    checked here, and the payload decrypted by this module's STREAM. A success must give the
    `payload` digest; a payload failure must fail, having released exactly what `payload` hashes."""
    import zlib
    counts = {"success": 0, "payload failure": 0}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path) or name.endswith(".md"):
            continue
        raw = open(path, "rb").read()
        head, _, body = raw.partition(b"\n\n")
        fields = {}
        for ln in head.decode("utf-8", "replace").split("\n"):
            k, _, v = ln.partition(": ")
            fields[k] = v
        if fields.get("armored") or not fields.get("identity", "").startswith("AGE-SECRET-KEY-1"):
            continue
        if fields.get("expect") not in counts:
            continue
        if fields.get("compressed") == "zlib":
            body = zlib.decompress(body)
        hrp, sk = bech32_decode(fields["identity"])
        assert hrp == "age-secret-key-" and len(sk) == 32, name
        stanzas, hdr, mac, payload = parse_age_file(body)
        file_key = next(k for k in (x25519_unwrap(a, b, sk) for a, b in stanzas) if k is not None)
        if "file key" in fields:
            assert file_key.hex() == fields["file key"], name
        assert header_mac(file_key, hdr) == mac, name
        released = []
        failed = False
        try:
            for pt in stream_open_chunks(payload_key(file_key, payload[:NONCE_LEN]), payload[NONCE_LEN:]):
                released.append(pt)
        except SpecError:
            failed = True
        assert len(payload) >= NONCE_LEN, name
        assert failed == (fields["expect"] == "payload failure"), name
        assert sha256(b"".join(released)).hex() == fields["payload"], name
        counts[fields["expect"]] += 1
    return counts


def self_check(samples: list, drbg, refused: list = ()) -> dict:
    """samples: [(file_key, nonce, padded plaintext)] whose payloads the attachment suite holds;
    refused: [(file_key, payload)] the suite's tampered and crafted payloads.

    1. padded() against an independent bucket list; chunk_sizes/payload_length arithmetic.
    2. Bech32 against the age.md example identity (its recipient printed there too).
    3. The CCTV X25519 vectors through this module (check_cctv), when the folder is found.
    4. Each sample's payload wrapped in a complete age file (an X25519 stanza and header MAC
       built here) and decrypted by PyPI `pyrage` and by the `age` command, when installed;
       plus an empty payload (one empty final chunk).
    5. age files made by `pyrage` and by `age` for a recipient of ours, decrypted by this module.
    6. Each refused payload wrapped the same way: this module's streaming reader, pyrage and age
       must all refuse it.
    A missing pyrage / age / CCTV folder is reported (and printed), never silently passed."""
    import shutil
    import subprocess
    import tempfile
    report = {}
    # 1.
    buckets = bucket_list()
    import bisect
    for n in (0, 1, 511, 512, 513, 537, 538, 65536, 10**6, 2**40 + 3, buckets[-1]):
        assert padded_length(n) == buckets[bisect.bisect_left(buckets, n)] >= n
    for n in (buckets[-1] + 1, U64_MAX):
        try:
            padded_length(n)
            raise AssertionError("padded beyond 2^64 - 1")
        except SpecError as e:
            assert e.name == "invalidMessage"
    assert all(b2 - b1 == max(1, b1 // 20) for b1, b2 in zip(buckets, buckets[1:]))
    for length, want in ((0, [0]), (1, [1]), (CHUNK, [CHUNK]), (CHUNK + 1, [CHUNK, 1]), (3 * CHUNK, [CHUNK] * 3)):
        assert chunk_sizes(length) == want and payload_length(length) == 16 + length + 16 * len(want)
    # 2. age.md: identity 0x42 * 32 ("AGE-SECRET-KEY-1GFPYYSJZ...") and its recipient
    example = bytes([0x42]) * 32
    assert identity_string(example) == "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"
    assert recipient_string(example) == "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"
    assert bech32_decode(identity_string(example)) == ("age-secret-key-", example)
    # 3.
    cctv = _cctv_dir()
    if cctv:
        report["cctv"] = check_cctv(cctv)
    else:
        print("note: C2SP/CCTV age vectors not found (set SESSIONKIT_AGE_VECTORS); that check was skipped")
        report["cctv"] = "skipped"
    # 4. and 5.
    sk = drbg.bytes(32)
    files = []
    for file_key, nonce, plaintext in list(samples) + [(drbg.bytes(16), drbg.bytes(16), b"")]:
        payload = payload_seal(file_key, nonce, plaintext)
        stanza = x25519_stanza(file_key, x25519_pub(sk), drbg.bytes(32))
        f = age_file(file_key, [stanza], payload)
        assert age_decrypt(f, sk) == plaintext
        files.append((f, plaintext))
    bad_files = []
    for file_key, payload in refused:
        f = age_file(file_key, [x25519_stanza(file_key, x25519_pub(sk), drbg.bytes(32))], payload)
        try:
            age_decrypt(f, sk)
            raise AssertionError("a tampered payload decrypted")
        except SpecError:
            pass
        bad_files.append(f)
    try:
        import pyrage
    except ImportError:
        pyrage = None
        print("note: PyPI pyrage not installed (pip install pyrage); the pyrage cross-check was skipped")
        report["pyrage"] = "skipped"
    if pyrage is not None:
        ident = pyrage.x25519.Identity.from_str(identity_string(sk))
        assert str(ident.to_public()) == recipient_string(sk)
        for f, plaintext in files:
            assert pyrage.decrypt(f, [ident]) == plaintext
        for size in (0, 1, CHUNK, CHUNK + 1, 2 * CHUNK, 137261):
            pt = drbg.bytes(size)
            assert age_decrypt(pyrage.encrypt(pt, [ident.to_public()]), sk) == pt
        # a tampered payload chunk must be refused by pyrage too
        f, plaintext = max(files, key=lambda x: len(x[1]))
        bad = bytearray(f)
        bad[-1] ^= 1
        try:
            pyrage.decrypt(bytes(bad), [ident])
            raise AssertionError("pyrage accepted a tampered payload")
        except pyrage.DecryptError:
            pass
        for f in bad_files:
            try:
                pyrage.decrypt(f, [ident])
                raise AssertionError("pyrage accepted a payload the suite refuses")
            except pyrage.DecryptError:
                pass
        report["pyrage"] = f"{len(files)} decrypted, {len(bad_files)} refused"
    age_cmd = shutil.which("age")
    if age_cmd is None:
        print("note: the age command is not installed (apt-get install age); the age CLI cross-check was skipped")
        report["age-cli"] = "skipped"
    else:
        with tempfile.TemporaryDirectory() as tmp:
            key = os.path.join(tmp, "key.txt")
            with open(key, "w") as fk:
                fk.write(identity_string(sk) + "\n")
            enc = os.path.join(tmp, "in.age")
            for f, plaintext in files:
                with open(enc, "wb") as fo:
                    fo.write(f)
                out = subprocess.run([age_cmd, "-d", "-i", key, enc], capture_output=True, check=True).stdout
                assert out == plaintext
            for size in (0, CHUNK, 2 * CHUNK + 7):
                pt = drbg.bytes(size)
                made = subprocess.run([age_cmd, "-e", "-r", recipient_string(sk)], input=pt, capture_output=True,
                                      check=True).stdout
                assert age_decrypt(made, sk) == pt
            for f in bad_files:
                with open(enc, "wb") as fo:
                    fo.write(f)
                r = subprocess.run([age_cmd, "-d", "-i", key, enc], capture_output=True)
                assert r.returncode != 0, "age accepted a payload the suite refuses"
        report["age-cli"] = f"{len(files)} decrypted, {len(bad_files)} refused"
    return report
