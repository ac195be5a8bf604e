// signal-vectors: the command-line front end of the conformance engine (SPEC §8).
//
//   signal-vectors verify [--json] PATH…        check vector files or folders
//   signal-vectors generate --seed N --out DIR  write fresh deterministic protocol vectors
//
// Exit status: 0 success, 1 a failed test or generation, 2 a usage error.

import Foundation
import SignalVectorKit

let usage = """
    usage: signal-vectors verify [--json] PATH...
           signal-vectors generate --seed N --out DIR

    verify    Runs every vector file given, or every *.json file found under a folder
              (Wycheproof files and SessionKit protocol files, SPEC §8). Prints one line per
              file and a total; --json prints the same as JSON. Exits 0 only when nothing failed.
    generate  Writes fresh deterministic protocol vectors for the suites with a generator
              (\(GeneratorRegistry.generators.map { $0.suite.name }.joined(separator: ", "))) into DIR.

    """

func fail(usage message: String) -> Never {
    FileHandle.standardError.write(Data("signal-vectors: \(message)\n\n\(usage)".utf8))
    exit(2)
}

func verify(_ arguments: [String]) -> Int32 {
    var json = false
    var paths: [String] = []
    var optionsEnded = false
    for argument in arguments {
        if !optionsEnded && argument == "--json" {
            json = true
        } else if !optionsEnded && argument == "--" {
            optionsEnded = true
        } else if !optionsEnded && argument.hasPrefix("-") {
            fail(usage: "unknown option \(argument)")
        } else {
            paths.append(argument)
        }
    }
    guard !paths.isEmpty else { fail(usage: "verify needs at least one PATH") }
    let report = ConformanceRunner().verify(paths: paths)
    print(json ? report.json.rendered() : report.renderTable(), terminator: "")
    return report.succeeded ? 0 : 1
}

func generate(_ arguments: [String]) -> Int32 {
    var seed: UInt64?
    var directory: String?
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
        switch argument {
        case "--seed":
            guard let text = remaining.popFirst(), let value = UInt64(text) else {
                fail(usage: "--seed needs a non-negative integer")
            }
            seed = value
        case "--out":
            guard let text = remaining.popFirst(), !text.isEmpty else { fail(usage: "--out needs a folder") }
            directory = text
        default:
            fail(usage: "unknown argument \(argument)")
        }
    }
    guard let seed, let directory else { fail(usage: "generate needs --seed N and --out DIR") }
    do {
        let files = try VectorGenerator(seed: seed).write(to: directory)
        for file in files {
            print("\(file.fileName)  \(file.suite)  \(file.testCount) tests (\(file.errorCount) expect an error)")
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("signal-vectors: \(error)\n".utf8))
        return 1
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "verify": exit(verify(Array(arguments.dropFirst())))
case "generate": exit(generate(Array(arguments.dropFirst())))
case "-h", "--help", "help": print(usage, terminator: ""); exit(0)
case nil: fail(usage: "missing command")
case let command?: fail(usage: "unknown command \(command)")
}
