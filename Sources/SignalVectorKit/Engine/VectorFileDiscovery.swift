import Foundation

/// Finds the vector files named on the command line.
///
/// A path to a file is taken as it is (whatever its extension). A path to a folder is searched
/// recursively for `*.json` files and for C2SP/CCTV age vectors (files without an extension
/// whose first line is a testkit header line such as `expect: success`, as in
/// `TestVectors/age/`); other files (`*.py`, `*.md`, `LICENSE`, …) and hidden files and
/// folders are skipped. Files are returned in lexicographic path order, so runs are
/// reproducible. A path that does not exist, or a folder without any `*.json` file, is reported
/// as a problem rather than silently ignored: a run over nothing must not pass.
///
/// Symbolic links to folders are followed, but each folder is searched once, by its resolved
/// path: a link back to an ancestor (a cycle) or a second link to a folder already searched
/// adds nothing.
public enum VectorFileDiscovery {
    /// One discovered path: either a file to read or a problem with a path.
    public struct Entry: Sendable, Equatable {
        /// The file path (the given path joined with the path found below it).
        public let path: String
        /// Why nothing can be read at `path`, or `nil` for a file to read.
        public let problem: String?

        /// Creates an entry.
        public init(path: String, problem: String?) {
            self.path = path
            self.problem = problem
        }
    }

    /// The vector files under `paths`, in order, with an entry carrying a `problem` for each
    /// path that is missing or holds no `*.json` file.
    public static func entries(for paths: [String], fileManager: FileManager = .default) -> [Entry] {
        paths.flatMap { entries(for: $0, fileManager: fileManager) }
    }

    private static func entries(for path: String, fileManager: FileManager) -> [Entry] {
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return [Entry(path: path, problem: "no such file or folder")]
        }
        guard isDirectory.boolValue else { return [Entry(path: path, problem: nil)] }

        let root = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        var found: [String] = []
        var pending = [root]
        var visited: Set<String> = []
        while let folder = pending.popLast() {
            guard visited.insert(resolved(folder)).inserted else { continue }
            guard let names = try? fileManager.contentsOfDirectory(atPath: folder) else {
                found.append(folder)   // reported as unreadable below
                continue
            }
            for name in names.sorted() where !name.hasPrefix(".") {
                let child = folder + "/" + name
                var childIsDirectory: ObjCBool = false
                guard fileManager.fileExists(atPath: child, isDirectory: &childIsDirectory) else { continue }
                if childIsDirectory.boolValue {
                    pending.append(child)
                } else if name.lowercased().hasSuffix(".json") || (!name.contains(".") && isAgeTestkitVector(child)) {
                    found.append(child)
                }
            }
        }
        guard !found.isEmpty else { return [Entry(path: path, problem: "folder holds no vector files (.json or C2SP/CCTV age)")] }
        return found.sorted().map { child in
            var childIsDirectory: ObjCBool = false
            if fileManager.fileExists(atPath: child, isDirectory: &childIsDirectory), childIsDirectory.boolValue {
                return Entry(path: child, problem: "folder cannot be listed")
            }
            return Entry(path: child, problem: nil)
        }
    }

    /// Whether the file at `path` starts like a C2SP/CCTV age vector.
    private static func isAgeTestkitVector(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let prefix = try? handle.read(upToCount: 32) else { return false }
        return AgeTestkitVector.looksLikeVector(prefix)
    }

    /// `path` with every symbolic link resolved, so two paths to one folder compare equal.
    private static func resolved(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
    }
}
