import SignalPrimitives

/// An age v1 header: the recipient stanzas and the MAC, with the bytes the MAC covers.
///
///     header   = v1-line 1*stanza end
///     v1-line  = "age-encryption.org/v1" LF
///     end      = "--- " 43base64char LF
///     stanza   = arg-line *full-line final-line
///     arg-line = "-> " argument *(SP argument) LF
///     full-line  = 64base64char LF
///     final-line = *63base64char LF
struct AgeHeader {
    static let versionLine = Array("age-encryption.org/v1".utf8)
    static let versionPrefix = Array("age-encryption.org/".utf8)
    static let stanzaPrefix = Array("->".utf8)
    static let macPrefix = Array("---".utf8)
    /// Characters of a full body line.
    static let columnsPerLine = 64
    /// The length of the payload nonce that follows the header.
    static let payloadNonceByteCount = 16

    /// The stanzas, in order.
    let stanzas: [AgeStanza]
    /// The 32-byte MAC.
    let mac: [UInt8]
    /// The header bytes up to and including `---` (what the MAC covers).
    let authenticatedBytes: [UInt8]

    /// The header bytes, without the MAC, for `stanzas`.
    static func encodeWithoutMAC(_ stanzas: [AgeStanza]) -> [UInt8] {
        var out = versionLine + [0x0A]
        for stanza in stanzas {
            out += stanzaPrefix
            for argument in stanza.arguments {
                out.append(0x20)
                out += Array(argument.utf8)
            }
            out.append(0x0A)
            let body = stanza.body.withUnsafeBytes { AgeBase64.encodeUnpadded($0) }
            var index = 0
            // Full lines, then a final line shorter than 64 columns (empty when the body's
            // base64 is a multiple of 64 characters, including an empty body).
            while body.count - index >= columnsPerLine {
                out += body[index ..< index + columnsPerLine]
                out.append(0x0A)
                index += columnsPerLine
            }
            out += body[index...]
            out.append(0x0A)
        }
        out += macPrefix
        return out
    }

    /// The whole header for `stanzas`, with its MAC under `fileKey`.
    static func encode(_ stanzas: [AgeStanza], fileKey: AgeFileKey) throws(AgeError) -> [UInt8] {
        var out = encodeWithoutMAC(stanzas)
        let mac = try AgeKeyWrap.headerMAC(fileKey, over: out)
        out.append(0x20)
        out += mac.withUnsafeBytes { AgeBase64.encodeUnpadded($0) }
        out.append(0x0A)
        return out
    }

    /// Unwraps the file key with the first identity that matches, then checks the MAC.
    /// - Throws: `AgeError.header` for an scrypt stanza next to others or a malformed stanza of
    ///   an identity's type, `AgeError.noMatch` when no identity unwraps a stanza,
    ///   `AgeError.headerMAC` when the MAC does not match the file key.
    func unwrapFileKey(with identities: [any AgeIdentity]) throws(AgeError) -> AgeFileKey {
        try AgeScryptIdentity.checkAlone(stanzas)
        var found: AgeFileKey?
        for identity in identities {
            if let key = try identity.unwrap(stanzas) {
                found = key
                break
            }
        }
        guard let fileKey = found else { throw .noMatch }
        var expected = try AgeKeyWrap.headerMAC(fileKey, over: authenticatedBytes)
        defer { SecureMemory.zero(&expected) }
        guard ConstantTime.equals(expected, mac) else { throw .headerMAC }
        return fileKey
    }
}

/// Reads an age header line by line (each line without its LF) and checks it against the
/// ABNF as it goes.
struct AgeHeaderParser {
    /// The longest header accepted (about 30,000 X25519 stanzas); longer input is a header
    /// failure, so a stream holds at most this much before its payload.
    static let maximumByteCount = 4 << 20

    private enum State {
        case version
        case stanzaOrEnd
        case body
        case done
    }

    private var state = State.version
    private var stanzas: [AgeStanza] = []
    /// The arguments and body so far of the stanza being read.
    private var arguments: [String] = []
    private var body: [UInt8] = []
    private var authenticated: [UInt8] = []

    /// Consumes one line (without its LF); returns the header once its MAC line is read.
    /// - Throws: `AgeError.header` when the line breaks the ABNF;
    ///   `AgeError.resourceLimit(.stanzaCount)` when it starts a stanza over
    ///   `AgeDecryptor.maximumStanzaCount`.
    mutating func consume(line: UnsafeRawBufferPointer) throws(AgeError) -> AgeHeader? {
        if line.contains(0x0D) { throw .header("a header line holds a carriage return") }
        switch state {
        case .done:
            throw .header("a line after the header's MAC line")
        case .version:
            guard line.elementsEqual(AgeHeader.versionLine) else {
                if line.starts(with: AgeHeader.versionPrefix) { throw .header("unsupported age version") }
                throw .header("the file does not start with the age v1 version line")
            }
            authenticated += line
            authenticated.append(0x0A)
            state = .stanzaOrEnd
            return nil
        case .stanzaOrEnd:
            if line.starts(with: AgeHeader.macPrefix) {
                guard !stanzas.isEmpty else { throw .header("a header needs at least one recipient stanza") }
                // "--- " 43base64char: the MAC, canonical unpadded base64 of 32 bytes.
                guard line.count == 4 + 43, line[3] == 0x20,
                      let mac = AgeBase64.decodeUnpadded(UnsafeRawBufferPointer(rebasing: line[4...])), mac.count == 32
                else { throw .header("malformed MAC line") }
                authenticated += AgeHeader.macPrefix
                state = .done
                return AgeHeader(stanzas: stanzas, mac: mac, authenticatedBytes: authenticated)
            }
            guard line.starts(with: AgeHeader.stanzaPrefix + [0x20]) else { throw .header("expected a stanza or the MAC line") }
            // Refused at the first stanza over the limit, before its arguments are read.
            guard stanzas.count < AgeDecryptor.maximumStanzaCount else {
                throw .resourceLimit(.stanzaCount(maximum: AgeDecryptor.maximumStanzaCount))
            }
            arguments = []
            body = []
            for argument in line[3...].split(separator: 0x20, omittingEmptySubsequences: false) {
                guard AgeStanza.isValidArgument(argument) else { throw .header("a stanza argument is empty or holds a character outside 0x21–0x7E") }
                arguments.append(String(decoding: argument, as: UTF8.self))
            }
            authenticated += line
            authenticated.append(0x0A)
            state = .body
            return nil
        case .body:
            guard line.count <= AgeHeader.columnsPerLine else { throw .header("a stanza body line is longer than 64 columns") }
            guard let decoded = AgeBase64.decodeUnpadded(line) else { throw .header("a stanza body line is not canonical base64") }
            authenticated += line
            authenticated.append(0x0A)
            body += decoded
            if line.count < AgeHeader.columnsPerLine {
                stanzas.append(AgeStanza(checkedArguments: arguments, body: body))
                state = .stanzaOrEnd
            }
            return nil
        }
    }
}
