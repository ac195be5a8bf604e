import Foundation

/// The package's own files, found from this source file, for the tests that check that a
/// document (the README, a DocC landing page or article) shows exactly the code the tests run.
public enum PackageDocuments {
    /// Why a document or a source does not hold what a check looks for.
    public struct Missing: Error, CustomStringConvertible {
        /// What is missing, and where.
        public let description: String
    }

    /// The package's root folder.
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The text of the file at `path`, relative to the package's root.
    public static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The lines of the first ```` ```swift ```` block of `text` (after the first occurrence of
    /// `heading` when one is given), without its `import` lines and the fences.
    /// - Parameter keepingEmptyLines: whether empty lines are kept (a README block shown as
    ///   it is pasted) or dropped.
    public static func firstSwiftBlock(in text: String, after heading: String? = nil, keepingEmptyLines: Bool = false) throws -> [String] {
        var rest = text[...]
        if let heading {
            guard let found = rest.range(of: heading) else { throw Missing(description: "no \"\(heading)\"") }
            rest = rest[found.upperBound...]
        }
        guard let open = rest.range(of: "```swift\n"), let close = rest[open.upperBound...].range(of: "```") else {
            throw Missing(description: "no ```swift block\(heading.map { " after \"\($0)\"" } ?? "")")
        }
        // The block's last line ends with the newline before the closing fence.
        return rest[open.upperBound ..< close.lowerBound].dropLast()
            .split(separator: "\n", omittingEmptySubsequences: !keepingEmptyLines).map(String.init)
            .filter { !$0.hasPrefix("import ") }
    }

    /// The lines of `source` between the line `begin` and the line that starts with `end`
    /// (markers in a test's source), each with its first `indentation` characters dropped.
    /// - Parameter keepingEmptyLines: whether empty lines are kept.
    public static func lines(
        of source: String, between begin: String, and end: String, indentation: Int, keepingEmptyLines: Bool = false
    ) throws -> [String] {
        guard let start = source.range(of: begin + "\n"),
              let stop = source[start.upperBound...].range(of: "\n" + String(repeating: " ", count: indentation) + end)
        else { throw Missing(description: "no \"\(begin)\" … \"\(end)\" markers") }
        return source[start.upperBound ..< stop.lowerBound]
            .split(separator: "\n", omittingEmptySubsequences: !keepingEmptyLines).map { String($0.dropFirst(indentation)) }
    }
}
