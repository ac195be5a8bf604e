/// One recipient stanza of an age header: its arguments (the first names the recipient type,
/// such as `X25519` or `scrypt`) and its body, which wraps the file key.
///
///     -> X25519 O6DLx/wDIawpUC978NSPjYvrfDtJVnZApXKp4FMPHCY
///     3aKjozt9agh7jGmvOKvR4iax41Wl4zj95MKK4X9JuWc
public struct AgeStanza: Sendable, Hashable {
    /// The arguments, at least one; each is 1 or more printable ASCII characters (0x21–0x7E).
    public let arguments: [String]
    /// The body bytes (base64 in the header, wrapped at 64 columns).
    public let body: [UInt8]

    /// The recipient type: the first argument.
    public var type: String { arguments[0] }

    /// A stanza with `arguments` and `body`.
    /// - Throws: `AgeError.invalidRecipient` when there is no argument or an argument is empty or
    ///   holds a character outside 0x21–0x7E (it could not be written in a header).
    public init(arguments: [String], body: [UInt8]) throws(AgeError) {
        guard !arguments.isEmpty else { throw .invalidRecipient("a stanza needs at least one argument") }
        for argument in arguments where !Self.isValidArgument(Array(argument.utf8)) {
            throw .invalidRecipient("a stanza argument must be 1 or more characters from 0x21 to 0x7E")
        }
        self.arguments = arguments
        self.body = body
    }

    /// A stanza the header parser has checked.
    init(checkedArguments: [String], body: [UInt8]) {
        arguments = checkedArguments
        self.body = body
    }

    /// ABNF `argument = 1*VCHAR`.
    static func isValidArgument<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        !bytes.isEmpty && bytes.allSatisfy { (0x21 ... 0x7E).contains($0) }
    }
}
