"""Reference values for the library's device-link format (SessionKit `DeviceLink`, not a SPEC
§8 suite): an identity seed sealed to a new device's request key.

    sealed = 0x01 || E || XChaCha20-Poly1305(key, nonce = 0^24, seed, AAD = 0x01 || E || R)
    key    = HKDF-SHA256(salt = E || R, ikm = X25519(e, R), info = "SessionKit device link v1", 32)

Independent of the Swift library: X25519 and HKDF from PyPI `cryptography`, XChaCha20-Poly1305
from spec_primitives (HChaCha20 written out + cryptography's ChaCha20Poly1305). Prints the hex
values that Tests/SessionKitTests/DeviceLinkTests.swift pins:

    python3 TestVectors/generator/device_link.py
"""
from spec_primitives import hkdf, x25519_pub, dh, xaead_seal

SEED = bytes(range(0x20, 0x40))          # the identity's Ed25519 seed
REQUEST_SK = bytes([0x11] * 32)          # the new device's request private key (as drawn)
EPHEMERAL_SK = bytes([0x22] * 32)        # the sealing device's ephemeral private key (as drawn)

r = x25519_pub(REQUEST_SK)
e = x25519_pub(EPHEMERAL_SK)
key = hkdf(e + r, dh(EPHEMERAL_SK, r), b"SessionKit device link v1", 32)
header = b"\x01" + e
sealed = header + xaead_seal(key, bytes(24), SEED, header + r)
assert len(sealed) == 81
print("request_key", r.hex())
print("sealed", sealed.hex())
