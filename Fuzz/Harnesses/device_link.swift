// Harness `device_link`: the device-link QR code (`DeviceLinkCode`) and the sealed identity
// (`DeviceLinkRequest.open`), both formats of the library (`DeviceLink`, version 2).
//
// Input: a mode byte, then bytes. Even mode: the bytes are a scanned QR payload. Invariants:
// decoding fails exactly as the format says (empty or a wrong length, an empty or non-UTF-8 user
// id, trailing bytes `invalidPayload`; another first byte `unsupportedVersion`; a request key
// that is not canonical `invalidKey`), judged by an independent oracle; a decoded code has the
// payload's request key and address. Odd mode: the bytes are a seal opened by a fixed request
// (seeded) expecting a fixed identity; the next input byte, when present, flips a byte of a
// genuine seal instead. Invariants: only `invalidPayload`, `unsupportedVersion`, `invalidKey`
// or `deviceLinkMismatch` are thrown; an open that succeeds returns the expected identity; a
// genuine seal with any byte flipped never opens.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static let newDevice = must { try ProtocolAddress(userID: "bob", deviceID: 2) }
    static let oldDevice = must { try ProtocolAddress(userID: "bob", deviceID: 1) }
    static let identity = must { try IdentityKeyPair(using: CountingRandomSource(seed: 7)) }
    static let request = must { try DeviceLinkRequest(for: newDevice, using: CountingRandomSource(seed: 8)) }
    static let genuine = must {
        try DeviceLink.seal(identity, to: try DeviceLinkCode(qrPayload: request.qrPayload), from: oldDevice,
                            using: CountingRandomSource(seed: 9))
    }

    static func expectedCodeError(_ bytes: [UInt8]) -> SessionError? {
        guard let first = bytes.first else { return .invalidPayload }
        guard first == 0x02 else { return .unsupportedVersion }
        guard bytes.count > 65 else { return .invalidPayload }
        let count = Int(bytes[65])
        guard count >= 1, bytes.count == 66 + count + 4 else { return .invalidPayload }
        guard String(validating: bytes[66 ..< 66 + count], as: UTF8.self) != nil else { return .invalidPayload }
        // Canonical X25519 (SPEC §1): bit 255 clear and u < p = 2^255 − 19.
        let key = Array(bytes[1 ..< 33])
        guard key[31] & 0x80 == 0 else { return .invalidKey }
        let isAtLeastP = key[31] == 0x7f && key[1 ..< 31].allSatisfy { $0 == 0xff } && key[0] >= 0xed
        return isAtLeastP ? .invalidKey : nil
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let mode = input.byte()
        if mode & 1 == 0 {
            let payload = input.rest()
            let expected = expectedCodeError(payload)
            do {
                let code = try DeviceLinkCode(qrPayload: payload)
                invariant(expected == nil, "decoded a code the format rejects (\(String(describing: expected)))")
                invariant(code.requestKey.rawRepresentation == Array(payload[1 ..< 33]), "request key differs")
                invariant(Array(payload[65...]) == code.address.encoded, "address differs")
            } catch {
                invariant(error == expected, "decode threw \(error), expected \(String(describing: expected))")
            }
            return
        }
        let flipping = mode & 2 != 0
        var sealed = flipping ? genuine : input.rest()
        if flipping {
            let position = Int(input.byte()) % sealed.count
            sealed[position] ^= max(1, input.byte())
        }
        do {
            let opened = try request.open(sealed, expectingIdentityKey: identity.publicKey)
            invariant(!flipping, "a genuine seal with a flipped byte opened")
            invariant(opened.publicKey == identity.publicKey, "opened another identity")
        } catch {
            let allowed: [SessionError] = [.invalidPayload, .unsupportedVersion, .invalidKey, .deviceLinkMismatch]
            invariant(allowed.contains(error), "open threw \(error)")
        }
    }

    static func seeds() -> [[UInt8]] {
        [[0] + request.qrPayload, [1] + genuine, [3, 0, 1], [3, 40, 0x80], [0, 0x01] + request.qrPayload.dropFirst()]
    }
}
