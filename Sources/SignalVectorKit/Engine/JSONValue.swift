import SignalPrimitives

/// A JSON value whose objects keep their keys in insertion order, so that generated vector
/// files and `--json` reports are byte-for-byte reproducible and read naturally (`id` first).
public enum JSONValue: Sendable, Equatable {
    /// A string.
    case string(String)
    /// An integer.
    case int(Int)
    /// A boolean.
    case bool(Bool)
    /// `null`.
    case null
    /// An array.
    case array([JSONValue])
    /// An object as ordered key–value pairs (keys are expected to be unique).
    case object([JSONMember])

    /// A lowercase-hex string value.
    public static func hex(_ bytes: [UInt8]) -> JSONValue { .string(Hex.encode(bytes)) }

    /// The value as JSON text: objects and arrays one member per line, indented by `indent`
    /// spaces per level, with a final newline when `trailingNewline` is set.
    public func rendered(indent: Int = 2, trailingNewline: Bool = true) -> String {
        var out = ""
        write(to: &out, level: 0, indent: indent)
        if trailingNewline { out += "\n" }
        return out
    }

    private func write(to out: inout String, level: Int, indent: Int) {
        let pad = String(repeating: " ", count: (level + 1) * indent)
        let closingPad = String(repeating: " ", count: level * indent)
        switch self {
        case let .string(text): JSONValue.writeString(text, to: &out)
        case let .int(value): out += String(value)
        case let .bool(value): out += value ? "true" : "false"
        case .null: out += "null"
        case let .array(items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "[\n"
            for (index, item) in items.enumerated() {
                out += pad
                item.write(to: &out, level: level + 1, indent: indent)
                out += index + 1 < items.count ? ",\n" : "\n"
            }
            out += closingPad + "]"
        case let .object(members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{\n"
            for (index, member) in members.enumerated() {
                out += pad
                JSONValue.writeString(member.key, to: &out)
                out += ": "
                member.value.write(to: &out, level: level + 1, indent: indent)
                out += index + 1 < members.count ? ",\n" : "\n"
            }
            out += closingPad + "}"
        }
    }

    private static func writeString(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// One member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    /// The key.
    public let key: String
    /// The value.
    public let value: JSONValue

    /// Creates a member.
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}
