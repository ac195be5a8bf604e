import SignalPrimitives

/// Bech32 (BIP 173) as age uses it: no length limit on the data part; a string is all
/// lowercase or all uppercase, and the checksum is computed over its lowercase form.
enum Bech32 {
    private static let charset: [UInt8] = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]

    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in charset.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        var checksum: UInt32 = 1
        for value in values {
            let top = checksum >> 25
            checksum = (checksum & 0x1ff_ffff) << 5 ^ UInt32(value)
            for index in 0 ..< 5 where (top >> UInt32(index)) & 1 == 1 {
                checksum ^= generator[index]
            }
        }
        return checksum
    }

    private static func expand(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    /// The lowercase ASCII form of `bytes`.
    private static func lowercased(_ bytes: [UInt8]) -> [UInt8] {
        bytes.map { (0x41 ... 0x5A).contains($0) ? $0 + 0x20 : $0 }
    }

    /// Regroups bits (8 → 5 with padding when encoding, 5 → 8 without when decoding); `nil`
    /// when decoding leaves a whole group or non-zero bits behind.
    private static func convertBits(_ data: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator: UInt32 = 0
        var bits = 0
        var out: [UInt8] = []
        out.reserveCapacity(data.count * from / to + 1)
        let mask = UInt32(1 << to) - 1
        for value in data {
            accumulator = accumulator << UInt32(from) | UInt32(value)
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8(accumulator >> UInt32(bits) & mask))
            }
            accumulator &= (1 << UInt32(bits)) - 1
        }
        if pad {
            if bits > 0 { out.append(UInt8(accumulator << UInt32(to - bits) & mask)) }
        } else if bits >= from || accumulator != 0 {
            return nil
        }
        return out
    }

    /// The Bech32 string of `data` under the human-readable part `hrp` (printable ASCII,
    /// one case), in the case of `hrp`.
    static func encode(hrp: String, data: [UInt8]) -> String {
        let hrpBytes = Array(hrp.utf8)
        let uppercase = hrpBytes.contains { (0x41 ... 0x5A).contains($0) }
        let lowerHRP = lowercased(hrpBytes)
        // Regrouping 8-bit bytes to 5-bit groups with padding always succeeds.
        var groups = convertBits(data, from: 8, to: 5, pad: true) ?? []
        defer { SecureMemory.zero(&groups) }
        let checksumInput = expand(lowerHRP) + groups + [0, 0, 0, 0, 0, 0]
        let checksum = polymod(checksumInput) ^ 1
        var out = lowerHRP + [UInt8(ascii: "1")]
        out += groups.map { charset[Int($0)] }
        for index in 0 ..< 6 { out.append(charset[Int(checksum >> UInt32(5 * (5 - index)) & 31)]) }
        let text = String(decoding: out, as: UTF8.self)
        return uppercase ? text.uppercased() : text
    }

    /// Decodes a Bech32 string: its human-readable part exactly as written (so its case can be
    /// checked) and its data, in zeroing storage (the data of an identity is its secret key).
    /// `nil` for mixed case, a misplaced separator, a character outside the set, a wrong
    /// checksum or bad padding bits.
    static func decode(_ text: String) -> (hrp: String, data: SecureBytes)? {
        let bytes = Array(text.utf8)
        let hasLower = bytes.contains { (0x61 ... 0x7A).contains($0) }
        let hasUpper = bytes.contains { (0x41 ... 0x5A).contains($0) }
        guard !(hasLower && hasUpper) else { return nil }
        guard let separator = bytes.lastIndex(of: UInt8(ascii: "1")), separator >= 1, separator + 7 <= bytes.count else {
            return nil
        }
        let hrp = Array(bytes[..<separator])
        guard hrp.allSatisfy({ (33 ... 126).contains($0) }) else { return nil }
        var groups: [UInt8] = []
        groups.reserveCapacity(bytes.count - separator - 1)
        // The groups of an identity are its secret key, regrouped.
        defer { SecureMemory.zero(&groups) }
        for character in lowercased(Array(bytes[(separator + 1)...])) {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            groups.append(value)
        }
        guard polymod(expand(lowercased(hrp)) + groups) == 1 else { return nil }
        var payload = Array(groups.dropLast(6))
        defer { SecureMemory.zero(&payload) }
        guard var data = convertBits(payload, from: 5, to: 8, pad: false) else { return nil }
        defer { SecureMemory.zero(&data) }
        return (String(decoding: hrp, as: UTF8.self), SecureBytes(copying: data))
    }
}
