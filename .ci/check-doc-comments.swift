// Fails when a public or open symbol of the documented modules has no doc comment.
//
//     swift .ci/check-doc-comments.swift SYMBOL_GRAPH_FOLDER MODULE...
//
// Reads the symbol graphs that `swift package generate-documentation` extracted (one folder per
// module under SYMBOL_GRAPH_FOLDER, e.g. .build/<triple>/extracted-symbols/<package>), which hold
// the public and open symbols only: SPI (`@_spi`) and internal symbols are not part of the
// documented API and are not listed there. Symbols the compiler synthesized (memberwise
// `Equatable`, `Hashable`, `RawRepresentable` conformances, ...) are skipped; everything else
// that is public must carry a `///` comment, extensions of other modules' types included.
// Prints one line per undocumented symbol (file:line: kind name) and exits with status 1 when
// there is any, or when a module has no symbol graph.
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard let folder = arguments.first, arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: check-doc-comments.swift SYMBOL_GRAPH_FOLDER MODULE...\n".utf8))
    exit(2)
}

var undocumented: [String] = []
var checked = 0
for module in arguments.dropFirst() {
    let moduleFolder = URL(fileURLWithPath: folder).appendingPathComponent(module)
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: moduleFolder.path)) ?? [])
        .filter { $0.hasSuffix(".symbols.json") }
        .sorted()
    guard files.contains("\(module).symbols.json") else {
        FileHandle.standardError.write(Data("no symbol graph for \(module) in \(moduleFolder.path)\n".utf8))
        exit(1)
    }
    for file in files {
        let data = try Data(contentsOf: moduleFolder.appendingPathComponent(file))
        guard let graph = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let symbols = graph["symbols"] as? [[String: Any]]
        else {
            FileHandle.standardError.write(Data("\(file): not a symbol graph\n".utf8))
            exit(1)
        }
        for symbol in symbols {
            guard let access = symbol["accessLevel"] as? String, access == "public" || access == "open" else { continue }
            let identifier = (symbol["identifier"] as? [String: Any])?["precise"] as? String ?? ""
            if identifier.contains("::SYNTHESIZED::") { continue }
            checked += 1
            if let comment = symbol["docComment"] as? [String: Any],
               let lines = comment["lines"] as? [[String: Any]],
               lines.contains(where: { !(($0["text"] as? String) ?? "").trimmingCharacters(in: .whitespaces).isEmpty }) {
                continue
            }
            let kind = (symbol["kind"] as? [String: Any])?["displayName"] as? String ?? "symbol"
            let path = (symbol["pathComponents"] as? [String])?.joined(separator: ".") ?? identifier
            let location = symbol["location"] as? [String: Any]
            let uri = (location?["uri"] as? String).flatMap { URL(string: $0)?.path } ?? module
            let line = ((location?["position"] as? [String: Any])?["line"] as? Int).map { $0 + 1 }
            undocumented.append("\(uri):\(line.map(String.init) ?? "?"): \(kind) \(module).\(path) has no doc comment")
        }
    }
}

for entry in undocumented.sorted() { print(entry) }
if undocumented.isEmpty {
    print("doc comments: every one of \(checked) public symbols in \(arguments.dropFirst().joined(separator: ", ")) is documented")
} else {
    print("doc comments: \(undocumented.count) of \(checked) public symbols have none (add a /// comment)")
    exit(1)
}
