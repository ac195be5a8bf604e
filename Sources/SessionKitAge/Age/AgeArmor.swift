/// age's ASCII armor: strict PEM (RFC 7468 §3) with the label `AGE ENCRYPTED FILE`, padded
/// canonical base64 in lines of 64 columns, no headers. As `age.md` recommends, everything
/// else is refused, except whitespace before and after the PEM block (at most 1 KiB each)
/// and CRLF line ends.
enum AgeArmor {
    static let beginLine = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    static let endLine = Array("-----END AGE ENCRYPTED FILE-----".utf8)
    /// Characters per full line.
    static let columnsPerLine = 64
    /// Bytes encoded in a full line.
    static let bytesPerLine = 48
    /// The most whitespace accepted before and after the PEM block.
    static let maximumWhitespace = 1024

    /// Space, tab, LF, vertical tab, form feed, CR.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09 ... 0x0D).contains(byte)
    }
}

/// Armors bytes pushed in pieces: the BEGIN line first, then one base64 line per 48 bytes,
/// and on `finish` the last, shorter line (if any) and the END line.
struct AgeArmorEncoder {
    private var pending: [UInt8] = []
    private var started = false

    /// Encodes `input`; the armored text of complete lines goes to `output`.
    mutating func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) -> Void) {
        var text: [UInt8] = []
        if !started {
            text += AgeArmor.beginLine + [0x0A]
            started = true
        }
        var offset = 0
        if !pending.isEmpty {
            let take = min(AgeArmor.bytesPerLine - pending.count, input.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[0 ..< take]))
            offset = take
            if pending.count == AgeArmor.bytesPerLine {
                text += pending.withUnsafeBytes { AgeBase64.encodePadded($0) } + [0x0A]
                pending.removeAll(keepingCapacity: true)
            }
        }
        while input.count - offset >= AgeArmor.bytesPerLine {
            text += AgeBase64.encodePadded(UnsafeRawBufferPointer(rebasing: input[offset ..< offset + AgeArmor.bytesPerLine])) + [0x0A]
            offset += AgeArmor.bytesPerLine
        }
        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset...]))
        text.withUnsafeBytes { output($0) }
    }

    /// Writes the last line and the END line.
    mutating func finish(output: (UnsafeRawBufferPointer) -> Void) {
        var text: [UInt8] = started ? [] : AgeArmor.beginLine + [0x0A]
        if !pending.isEmpty { text += pending.withUnsafeBytes { AgeBase64.encodePadded($0) } + [0x0A] }
        text += AgeArmor.endLine + [0x0A]
        pending.removeAll()
        started = true
        text.withUnsafeBytes { output($0) }
    }
}

/// Removes the armor from text pushed in pieces, checking it line by line.
struct AgeArmorDecoder {
    private enum State {
        /// Before the BEGIN line; the whitespace seen so far.
        case leading(whitespace: Int)
        /// Inside the block; `lastLineShort` after a line of fewer than 48 bytes, which must be
        /// the last before END.
        case body(lastLineShort: Bool)
        /// After the END line; the whitespace seen so far.
        case trailing(whitespace: Int)
    }

    private var state = State.leading(whitespace: 0)
    private var line: [UInt8] = []
    /// The longest line kept while looking for its end (a base64 line is 64 characters, the
    /// BEGIN line 34; whitespace lines before the block are limited to 1 KiB anyway).
    private static let maximumLineLength = AgeArmor.maximumWhitespace + 2

    /// Decodes `input`; the bytes of complete lines go to `output`.
    /// - Throws: `AgeError.armor` when the armor is not strict PEM, or what `output` throws.
    mutating func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws(AgeError) -> Void) throws(AgeError) {
        for byte in input {
            if case let .trailing(whitespace) = state {
                guard AgeArmor.isWhitespace(byte) else { throw .armor("data after the END line") }
                guard whitespace + 1 < AgeArmor.maximumWhitespace else { throw .armor("too much whitespace after the END line") }
                state = .trailing(whitespace: whitespace + 1)
                continue
            }
            if byte == 0x0A {
                try processLine(output)
                line.removeAll(keepingCapacity: true)
            } else {
                guard line.count < Self.maximumLineLength else { throw .armor("a line is too long") }
                line.append(byte)
            }
        }
    }

    /// Ends the input: the last line (if it has no LF) is processed, and the END line must
    /// have been seen.
    /// - Throws: `AgeError.armor` for a missing END line, or what `output` throws.
    mutating func finish(output: (UnsafeRawBufferPointer) throws(AgeError) -> Void) throws(AgeError) {
        if case .trailing = state { return }
        if !line.isEmpty {
            try processLine(output)
            line.removeAll()
        }
        guard case .trailing = state else { throw .armor("the armor ends without its END line") }
    }

    private mutating func processLine(_ output: (UnsafeRawBufferPointer) throws(AgeError) -> Void) throws(AgeError) {
        var content = line[...]
        if content.last == 0x0D { content = content.dropLast() }
        switch state {
        case let .leading(whitespace):
            if content.allSatisfy(AgeArmor.isWhitespace) {
                let total = whitespace + line.count + 1
                guard total <= AgeArmor.maximumWhitespace else { throw .armor("too much whitespace before the BEGIN line") }
                state = .leading(whitespace: total)
                return
            }
            guard content.elementsEqual(AgeArmor.beginLine) else { throw .armor("the first line is not the BEGIN line of an age file") }
            state = .body(lastLineShort: false)
        case let .body(lastLineShort):
            if content.elementsEqual(AgeArmor.endLine) {
                state = .trailing(whitespace: 0)
                return
            }
            guard !lastLineShort else { throw .armor("a short line is not followed by the END line") }
            guard !content.isEmpty else { throw .armor("an empty line inside the armor") }
            guard content.count <= AgeArmor.columnsPerLine else { throw .armor("a line is longer than 64 columns") }
            guard let bytes = AgeBase64.decodePadded(Array(content)) else { throw .armor("a line is not canonical base64") }
            state = .body(lastLineShort: bytes.count < AgeArmor.bytesPerLine)
            try bytes.withBytes { (b: UnsafeRawBufferPointer) throws(AgeError) in try output(b) }
        case .trailing:
            throw .armor("data after the END line")
        }
    }
}
