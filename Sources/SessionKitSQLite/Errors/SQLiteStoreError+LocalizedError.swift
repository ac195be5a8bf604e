import Foundation

extension SQLiteStoreError: LocalizedError {
    /// `description` as a sentence (paths, tables and SQLite's messages; never a key or a value).
    public var errorDescription: String? { "Store error: \(description)." }
}
