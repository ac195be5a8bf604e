#if canImport(Darwin)
import Foundation

extension SQLiteProtocolStore {
    /// Marks the store file at `path`, and its `-wal` and `-shm` files when they exist, as
    /// excluded from iCloud and device backups (`URLResourceValues.isExcludedFromBackup`), so
    /// that restoring a backup cannot bring back an old copy of the ratchet state. Call it once
    /// the store is open (the WAL files exist then) and again after moving the file; the flag
    /// travels with each file, so a file SQLite creates anew (a WAL after `close()`) inherits
    /// nothing: calling it at every open is cheap and safe. Apple platforms only (the flag does
    /// not exist elsewhere: keep the file out of the backup set yourself).
    ///
    /// What it does not do: a backup made by other means (a copy of the container, a disk image)
    /// still holds the file, which restore detection (`StoreEpochKeeper`) then catches.
    /// - Throws: `SQLiteStoreError.cannotOpen` with the path when the flag cannot be set on the
    ///   database file (a missing WAL or `-shm` file is skipped).
    public static func excludeFromBackup(path: String) throws(SQLiteStoreError) {
        for suffix in ["", "-wal", "-shm"] {
            var url = URL(fileURLWithPath: path + suffix)
            guard suffix.isEmpty || FileManager.default.fileExists(atPath: url.path) else { continue }
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            do { try url.setResourceValues(values) } catch {
                throw .cannotOpen(path: path + suffix, reason: "cannot exclude it from backups: \(error.localizedDescription)")
            }
        }
    }
}
#endif
