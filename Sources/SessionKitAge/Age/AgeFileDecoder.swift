import SignalPrimitives

/// Decrypts a binary age file pushed in pieces: the header (line by line), then the file key
/// (unwrapped with the identities, the MAC checked), the payload nonce and the payload.
struct AgeFileDecoder {
    private enum Stage {
        case header
        case nonce(AgeFileKey)
        case payload
    }

    private let identities: [any AgeIdentity]
    private var stage = Stage.header
    private var parser = AgeHeaderParser()
    private var line: [UInt8] = []
    private var headerByteCount = 0
    private var nonce: [UInt8] = []
    private var payload: AgePayloadDecoder?
    /// The most payload chunks opened together on all cores (`AgePayloadDecoder`); set before
    /// the payload starts.
    var batchChunks = 1 {
        didSet { payload?.batchChunks = batchChunks }
    }

    init(identities: [any AgeIdentity]) {
        self.identities = identities
    }

    /// Whether the header has been read and a file key unwrapped.
    var hasFileKey: Bool {
        if case .header = stage { return false }
        return true
    }

    /// Adds file bytes; verified plaintext goes to `output`.
    /// - Throws: `AgeError.header`, `.noMatch`, `.headerMAC` or `.payload`.
    mutating func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        var offset = 0
        while offset < input.count {
            switch stage {
            case .header:
                let rest = UnsafeRawBufferPointer(rebasing: input[offset...])
                let end = rest.firstIndex(of: 0x0A)
                let take = end.map { $0 - rest.startIndex + 1 } ?? rest.count
                headerByteCount += take
                guard headerByteCount <= AgeHeaderParser.maximumByteCount else {
                    throw .header("the header is longer than \(AgeHeaderParser.maximumByteCount) bytes")
                }
                offset += take
                guard end != nil else {
                    line.append(contentsOf: rest)
                    continue
                }
                line.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[rest.startIndex ..< rest.startIndex + take - 1]))
                let header = try line.withBytes { (l: UnsafeRawBufferPointer) throws(AgeError) in try parser.consume(line: l) }
                line.removeAll(keepingCapacity: true)
                if let header {
                    line = []
                    stage = .nonce(try header.unwrapFileKey(with: identities))
                }
            case let .nonce(fileKey):
                let take = min(AgePayloadCipher.nonceByteCount - nonce.count, input.count - offset)
                nonce.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset ..< offset + take]))
                offset += take
                if nonce.count == AgePayloadCipher.nonceByteCount {
                    payload = AgePayloadDecoder(cipher: try AgePayloadCipher(fileKey: fileKey, nonce: nonce), batchChunks: batchChunks)
                    stage = .payload
                }
            case .payload:
                try payload?.update(UnsafeRawBufferPointer(rebasing: input[offset...]), output: output)
                offset = input.count
            }
        }
    }

    /// Ends the input.
    /// - Throws: `AgeError.header` for a file that ends in its header or nonce,
    ///   `AgeError.payload` for a payload that does not end with a valid final chunk.
    mutating func finish(output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        switch stage {
        case .header: throw .header(headerByteCount == 0 ? "the file is empty" : "the file ends inside its header")
        case .nonce: throw .header("the file ends before its payload nonce")
        case .payload: try payload?.finish(output: output)
        }
    }
}
