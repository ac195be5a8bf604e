import Foundation
import XCTest

/// Runs other programs for the interoperability tests (the `age` command, Python with PyPI
/// `pyrage` or `cryptography`), and skips a test when one is missing.
public enum ExternalTool {
    /// What a program exited with and wrote.
    public struct Output: Sendable {
        /// The exit status.
        public let status: Int32
        /// Its standard output.
        public let stdout: Data
        /// Its standard error, as text.
        public let stderr: String
    }

    /// Runs `arguments` (the first found on PATH), writing `input` to its standard input, and
    /// waits for it.
    @discardableResult
    public static func run(_ arguments: [String], input: Data? = nil) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let out = Pipe(), err = Pipe(), inPipe = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inPipe
        try process.run()
        if let input { inPipe.fileHandleForWriting.write(input) }
        try inPipe.fileHandleForWriting.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: stdout, stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Skips the test (throws `XCTSkip` with `message`) unless every command of `checks` exits
    /// with 0; when the environment variable CI is set it also fails the test: CI must not skip
    /// the interoperability tests.
    public static func require(_ checks: [[String]], otherwise message: String) throws {
        guard checks.contains(where: { (try? run($0))?.status != 0 }) else { return }
        if ProcessInfo.processInfo.environment["CI"] != nil {
            XCTFail("\(message); CI must not skip the interoperability tests")
            throw XCTSkip("failed: \(message)")
        }
        throw XCTSkip(message)
    }
}
