#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SessionKit
import SessionKitAge
import SignalPrimitives

/// Storage keys kept in a file encrypted under a passphrase: an age v1 file (C2SP `age.md`)
/// with one `scrypt` stanza (work factor 2^18 by default) whose plaintext is the 32 key bytes.
/// `age -d` with the passphrase prints the key, so the file is readable without this library.
///
/// Unlike the raw key file (`createKeyFile(at:)`), the file alone does not open the store: a
/// copy of it is protected by the passphrase and scrypt's cost. It gets the same file-system
/// care: created with mode 0600 under a temporary name and linked into place (never
/// overwriting), read only when it is a regular file of this user, not readable by others, in
/// a folder only this user (or root) can write. Changing the passphrase rewrites this small
/// file only (the store keeps its key): a new file under a temporary name, synced, renamed over
/// the old one.
extension StorageKey {
    /// The largest passphrase key file read (an scrypt header and a 32-byte payload take about
    /// 200 bytes).
    static let maximumPassphraseKeyFileByteCount = 4096

    /// Creates a passphrase key file at `path` holding a new random key, and returns the key.
    /// scrypt runs once here (about a second and 256 MiB at the default work factor).
    /// - Throws: `SQLiteStoreError.invalidArgument` for an empty passphrase or a work factor
    ///   outside 16 … 20 (`AgeScryptIdentity.defaultMaximumWorkFactor`, what readers accept by
    ///   default); `.keyFile` with `.folderWritableByOthers` or
    ///   `.folderOwnedByAnotherUser` when the folder is not private to this user,
    ///   `.alreadyExists` when anything is at `path`, `.systemError` when it cannot be written
    ///   (nothing is left behind).
    public static func createPassphraseKeyFile(
        at path: String, passphrase: String, workFactor: Int = AgeScryptRecipient.defaultWorkFactor,
        using random: any RandomSource = SystemRandomSource()
    ) throws(SQLiteStoreError) -> StorageKey {
        let key = generate(using: random)
        try writePassphraseKeyFile(key, at: path, passphrase: passphrase, workFactor: workFactor, replacing: false)
        return key
    }

    /// Reads the key in the passphrase key file at `path`.
    /// - Throws: `SQLiteStoreError.keyFile` with `.wrongPassphrase` when the passphrase does
    ///   not open it, `.notAPassphraseKeyFile` when it is not an scrypt age file of a 32-byte
    ///   key (or is damaged, or asks for a work factor above `maximumWorkFactor`), and the
    ///   file-system problems of `readKeyFile(at:)` (`.missing`, `.notARegularFile`,
    ///   `.ownedByAnotherUser`, `.permissionsTooOpen`, `.folderWritableByOthers`,
    ///   `.folderOwnedByAnotherUser`, `.systemError`); `.invalidArgument` for an empty
    ///   passphrase.
    public static func readPassphraseKeyFile(
        at path: String, passphrase: String, maximumWorkFactor: Int = AgeScryptIdentity.defaultMaximumWorkFactor
    ) throws(SQLiteStoreError) -> StorageKey {
        let identity: AgeScryptIdentity
        do { identity = try AgeScryptIdentity(passphrase: passphrase, maximumWorkFactor: maximumWorkFactor) } catch {
            throw .invalidArgument("passphrase key file: \(error)")
        }
        let file = try readSmallPrivateFile(at: path)
        let stream = AgeDecryptingStream(identities: [identity], format: .binary)
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(byteCount + 1)
        defer { SecureMemory.zero(&plaintext) }
        let release = { (bytes: UnsafeRawBufferPointer) in
            // More than a key is not kept (the length is refused below).
            if plaintext.count + bytes.count <= byteCount + 1 { plaintext.append(contentsOf: bytes) } else { plaintext.append(0) }
        }
        do throws(AgeError) {
            try file.withBytes { (bytes: UnsafeRawBufferPointer) throws(AgeError) in try stream.update(bytes, releaseBytes: release) }
            try stream.finish(releaseBytes: release)
        } catch {
            switch error {
            case .noMatch: throw .keyFile(path: path, problem: .wrongPassphrase)
            case .primitive, .resourceLimit(.scryptMemory): throw .keyFile(path: path, problem: .notAPassphraseKeyFile(reason: "scrypt cannot run: \(error)"))
            default: throw .keyFile(path: path, problem: .notAPassphraseKeyFile(reason: error.description))
            }
        }
        guard plaintext.count == byteCount else { throw .keyFile(path: path, problem: .wrongLength(found: plaintext.count)) }
        return StorageKey(uncheckedStorage: SecureBytes(copying: plaintext))
    }

    /// Re-encrypts the passphrase key file at `path` under `newPassphrase`, and returns its key
    /// (unchanged: the store needs no rewrite). The new file is written under a temporary name,
    /// synced and renamed over the old one, so the path holds the old file or the new one,
    /// never a partial one.
    /// - Throws: the errors of `readPassphraseKeyFile(at:passphrase:maximumWorkFactor:)` for the
    ///   old passphrase (the file is then unchanged), `.invalidArgument` for an empty new
    ///   passphrase or a work factor outside 16 … 20, `.keyFile(.systemError)` when the new file
    ///   cannot be written (the old one stays).
    @discardableResult
    public static func changePassphrase(
        ofKeyFileAt path: String, from oldPassphrase: String, to newPassphrase: String,
        workFactor: Int = AgeScryptRecipient.defaultWorkFactor
    ) throws(SQLiteStoreError) -> StorageKey {
        try checkWorkFactor(workFactor)
        let key = try readPassphraseKeyFile(at: path, passphrase: oldPassphrase)
        try writePassphraseKeyFile(key, at: path, passphrase: newPassphrase, workFactor: workFactor, replacing: true)
        return key
    }

    // MARK: Support

    private static func checkWorkFactor(_ workFactor: Int) throws(SQLiteStoreError) {
        guard (AccountExport.minimumWorkFactor ... AgeScryptIdentity.defaultMaximumWorkFactor).contains(workFactor) else {
            throw .invalidArgument(
                "a key file's scrypt work factor must be in \(AccountExport.minimumWorkFactor) … \(AgeScryptIdentity.defaultMaximumWorkFactor), not \(workFactor)")
        }
    }

    /// Writes `key` encrypted under `passphrase` to `path`: a new file linked into place, or
    /// with `replacing` renamed over the existing one.
    private static func writePassphraseKeyFile(
        _ key: StorageKey, at path: String, passphrase: String, workFactor: Int, replacing: Bool
    ) throws(SQLiteStoreError) {
        try checkWorkFactor(workFactor)
        let recipient: AgeScryptRecipient
        do { recipient = try AgeScryptRecipient(passphrase: passphrase, workFactor: workFactor) } catch {
            throw .invalidArgument("passphrase key file: \(error)")
        }
        try checkFolder(of: path)
        if !replacing, ExportFiles.exists(path) { throw .keyFile(path: path, problem: .alreadyExists) }
        var file: [UInt8] = []
        do throws(AgeError) {
            let stream = try AgeEncryptor(recipients: [recipient]).makeStream()
            try key.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(AgeError) in
                try stream.update(bytes) { file.append(contentsOf: $0) }
            }
            try stream.finish { file.append(contentsOf: $0) }
        } catch {
            throw .keyFile(path: path, problem: .notAPassphraseKeyFile(reason: "cannot encrypt: \(error)"))
        }
        let output: TemporaryOutputFile
        do { output = try TemporaryOutputFile(destination: path) } catch { throw .keyFile(path: path, problem: .systemError(errno: errno)) }
        defer { output.discard() }
        file.withUnsafeBytes { output.write($0) }
        do {
            try output.commit(replace: replacing)
        } catch .targetExists {
            throw .keyFile(path: path, problem: .alreadyExists)
        } catch {
            throw .keyFile(path: path, problem: .systemError(errno: errno == 0 ? EIO : errno))
        }
    }

    /// The bytes of the file at `path` after the checks of `readKeyFile(at:)` (no symbolic
    /// link, a regular file of this user, no access for others, a private folder), at most
    /// `maximumPassphraseKeyFileByteCount` bytes.
    private static func readSmallPrivateFile(at path: String) throws(SQLiteStoreError) -> [UInt8] {
        let (fd, _) = try openPrivateFile(at: path)
        defer { _ = close(fd) }
        var buffer = [UInt8](repeating: 0, count: maximumPassphraseKeyFileByteCount + 1)
        var total = 0
        while total < buffer.count {
            let n = buffer.withUnsafeMutableBytes { all -> Int in
                guard let base = all.baseAddress else { return 0 }
                return read(fd, base + total, all.count - total)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .keyFile(path: path, problem: .systemError(errno: errno))
            }
            if n == 0 { break }
            total += n
        }
        guard total <= maximumPassphraseKeyFileByteCount else {
            throw .keyFile(path: path, problem: .notAPassphraseKeyFile(reason: "longer than \(maximumPassphraseKeyFileByteCount) bytes"))
        }
        return Array(buffer[0 ..< total])
    }
}
