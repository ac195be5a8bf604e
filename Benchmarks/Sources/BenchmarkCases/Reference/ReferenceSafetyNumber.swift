/// SPEC §7 safety numbers and scannable fingerprints, composed naively.
enum ReferenceSafetyNumber<B: ReferenceBackend> {
    /// The 60-digit displayable number and the local party's scannable encoding.
    static func fingerprint(
        version: UInt8, iterations: Int, localID: [UInt8], localKey: [UInt8], remoteID: [UInt8], remoteKey: [UInt8]
    ) -> (displayable: String, scannable: [UInt8]) {
        let local = hash(key: localKey, id: localID, iterations: iterations)
        let remote = hash(key: remoteKey, id: remoteID, iterations: iterations)
        let localDigits = digits(local)
        let remoteDigits = digits(remote)
        let displayable = localDigits.lexicographicallyPrecedes(remoteDigits)
            ? localDigits + remoteDigits : remoteDigits + localDigits
        var scannable: [UInt8] = [0x08, version, 0x12, 0x22, 0x0a, 0x20]
        scannable += local[0..<32]
        scannable += [0x1a, 0x22, 0x0a, 0x20]
        scannable += remote[0..<32]
        return (String(decoding: displayable, as: UTF8.self), scannable)
    }

    /// H_0 = SHA-512(0x00 0x00 || K || ID || K); H_i = SHA-512(H_(i−1) || K).
    static func hash(key: [UInt8], id: [UInt8], iterations: Int) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 64)
        let first: [UInt8] = [0, 0] + key + id + key
        first.withUnsafeBytes { input in digest.withUnsafeMutableBytes { B.sha512(input, into: $0) } }
        var block = [UInt8](repeating: 0, count: 64 + key.count)
        block.withUnsafeMutableBytes { buffer in
            slice(buffer, 64, key.count).copyBytes(from: key)
            digest.withUnsafeMutableBytes { h in
                for _ in 1..<max(iterations, 1) {
                    slice(buffer, 0, 64).copyMemory(from: UnsafeRawBufferPointer(h))
                    B.sha512(UnsafeRawBufferPointer(buffer), into: h)
                }
            }
        }
        return digest
    }

    /// Six groups of five digits from H[0..<30]: each 5-byte big-endian chunk mod 100000.
    static func digits(_ digest: [UInt8]) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(30)
        for chunk in 0..<6 {
            var value: UInt64 = 0
            for byte in digest[(chunk * 5)..<(chunk * 5 + 5)] { value = value << 8 | UInt64(byte) }
            value %= 100_000
            var group = [UInt8](repeating: 0x30, count: 5)
            for position in stride(from: 4, through: 0, by: -1) {
                group[position] = 0x30 + UInt8(value % 10)
                value /= 10
            }
            text += group
        }
        return text
    }
}
