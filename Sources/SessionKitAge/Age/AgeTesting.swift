/// The age codecs one by one, for the fuzz harnesses and tests (SPI `Testing`).
@_spi(Testing) public enum AgeTesting {
    /// Parses the binary age header at the start of `bytes`: its stanzas, MAC and length.
    /// - Throws: `AgeError.header` when it does not parse, `AgeError.resourceLimit` with more
    ///   stanzas than `AgeDecryptor.maximumStanzaCount`.
    public static func parseHeader(_ bytes: [UInt8]) throws(AgeError) -> (stanzas: [AgeStanza], mac: [UInt8], length: Int) {
        var parser = AgeHeaderParser()
        var start = 0
        while let end = bytes[start...].firstIndex(of: 0x0A) {
            let header = try bytes[start ..< end].withBytes { (line: UnsafeRawBufferPointer) throws(AgeError) in try parser.consume(line: line) }
            start = end + 1
            if let header { return (header.stanzas, header.mac, start) }
        }
        throw .header("the input ends inside the header")
    }

    /// The header bytes for `stanzas` with `mac` (32 bytes) on its last line.
    public static func encodeHeader(_ stanzas: [AgeStanza], mac: [UInt8]) -> [UInt8] {
        AgeHeader.encodeWithoutMAC(stanzas) + [0x20] + Array(AgeBase64.encodeUnpadded(mac).utf8) + [0x0A]
    }

    /// The bytes inside an ASCII-armored input.
    /// - Throws: `AgeError.armor` when the armor is not strict.
    public static func dearmor(_ input: [UInt8]) throws(AgeError) -> [UInt8] {
        var decoder = AgeArmorDecoder()
        var out: [UInt8] = []
        try input.withBytes { (bytes: UnsafeRawBufferPointer) throws(AgeError) in
            try decoder.update(bytes) { (decoded: UnsafeRawBufferPointer) throws(AgeError) in out += decoded }
        }
        try decoder.finish { (decoded: UnsafeRawBufferPointer) throws(AgeError) in out += decoded }
        return out
    }

    /// The ASCII armor of `bytes`.
    public static func armor(_ bytes: [UInt8]) -> [UInt8] {
        var encoder = AgeArmorEncoder()
        var out: [UInt8] = []
        bytes.withUnsafeBytes { encoder.update($0) { out += $0 } }
        encoder.finish { out += $0 }
        return out
    }

    /// Bech32-decodes `text` (human-readable part as written, data).
    public static func bech32Decode(_ text: String) -> (hrp: String, data: [UInt8])? {
        Bech32.decode(text).map { ($0.hrp, $0.data.bytes) }
    }

    /// Bech32-encodes `data` under `hrp`, in the case of `hrp`.
    public static func bech32Encode(hrp: String, data: [UInt8]) -> String {
        Bech32.encode(hrp: hrp, data: data)
    }
}
