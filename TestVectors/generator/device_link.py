"""Reference values for the library's device-link format, version 2 (SessionKit `DeviceLink`,
not a SPEC §8 suite): a new device's QR payload, and an identity seed sealed for it.

    qr_payload = 0x02 || R (32) || S (32) || Encode(address)
    sealed     = 0x02 || E (32) || XChaCha20-Poly1305(key, nonce = 0^24, seed (32), AAD = 0x02 || E || R || Encode(address))
    key        = HKDF-SHA256(salt = E || R, ikm = X25519(e, R) || S,
                             info = "SessionKit device link v2" || Encode(address), 32)

R is the new device's request key, S the 32-byte secret shown only in its QR code, address
(user id, device id) the new device's own address (Encode of SPEC §1), E the sealing device's
fresh ephemeral key. A sealer who knows R and the address but not S (someone who saw the
request key without the secret, or a server), or who seals for another address, produces a
seal that the new device does not open.

Independent of the Swift library: X25519 and HKDF from PyPI `cryptography`, XChaCha20-Poly1305
from spec_primitives (HChaCha20 written out + cryptography's ChaCha20Poly1305). Prints the hex
values that Tests/SessionKitTests/DeviceLinkTests.swift pins:

    python3 TestVectors/generator/device_link.py
"""
from spec_primitives import hkdf, x25519_pub, dh, xaead_seal, xaead_open, encode_address, SpecError

VERSION = b"\x02"
INFO = b"SessionKit device link v2"

SEED = bytes(range(0x20, 0x40))          # the identity's Ed25519 seed
REQUEST_SK = bytes([0x11] * 32)          # the new device's request private key (drawn first)
SECRET = bytes([0x33] * 32)              # the QR secret S (drawn second)
EPHEMERAL_SK = bytes([0x22] * 32)        # the sealing device's ephemeral private key (as drawn)
ADDRESS = ("alice", 2)                   # the new device's address


def seal(seed: bytes, request_key: bytes, secret: bytes, address: bytes, ephemeral_sk: bytes) -> bytes:
    e = x25519_pub(ephemeral_sk)
    key = hkdf(e + request_key, dh(ephemeral_sk, request_key) + secret, INFO + address, 32)
    header = VERSION + e
    return header + xaead_seal(key, bytes(24), seed, header + request_key + address)


def opens(sealed: bytes, request_sk: bytes, secret: bytes, address: bytes) -> bool:
    r = x25519_pub(request_sk)
    e = sealed[1:33]
    key = hkdf(e + r, dh(request_sk, e) + secret, INFO + address, 32)
    try:
        return xaead_open(key, bytes(24), sealed[33:], sealed[:33] + r + address) == SEED
    except SpecError:
        return False


r = x25519_pub(REQUEST_SK)
address = encode_address(*ADDRESS)
qr_payload = VERSION + r + SECRET + address
sealed = seal(SEED, r, SECRET, address, EPHEMERAL_SK)
assert len(sealed) == 81 and len(qr_payload) == 1 + 32 + 32 + 1 + 5 + 4
assert opens(sealed, REQUEST_SK, SECRET, address)

# A raced seal: someone who saw the request key (and the address) but not the secret seals
# with S = 0^32. Another: the right secret, sealed for another device id of the same user.
raced = seal(SEED, r, bytes(32), address, EPHEMERAL_SK)
other_device = seal(SEED, r, SECRET, encode_address("alice", 3), EPHEMERAL_SK)
assert not opens(raced, REQUEST_SK, SECRET, address)
assert not opens(other_device, REQUEST_SK, SECRET, address)

print("request_key", r.hex())
print("qr_payload", qr_payload.hex())
print("sealed", sealed.hex())
print("raced_sealed", raced.hex())
print("other_device_sealed", other_device.hex())
