#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a text envelope does not decode (`MessageEnvelope(text:)`), or cannot be made.
///
/// A message whose envelope does not decode can never be processed: drop it. Descriptions name
/// fields and sizes, never a body.
public enum EnvelopeError: Error, Equatable, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// The text is not one JSON object (or not UTF-8).
    case notAJSONObject
    /// The text is longer than `MessageEnvelope.maximumTextByteCount` bytes (`found`).
    case textTooLong(found: Int)
    /// The envelope's version `found` is not one this library reads (`MessageEnvelope.version`).
    case unsupportedVersion(found: Int)
    /// A required field is absent.
    case missingField(String)
    /// A field this version does not define (envelopes are decoded strictly).
    case unknownField(String)
    /// A field appears twice in one object (two readers could take different copies).
    case repeatedField(String)
    /// A field holds a value of the wrong type or out of range: not canonical base64, an
    /// address whose user id is not 1–255 UTF-8 bytes, an unknown kind, an empty body, a
    /// number that is not a canonical integer (`1.0`, `1e0`, `01`, `-0`: numbers are integers
    /// written one way only).
    case invalidField(String)
    /// The fields do not fit the kind: a group kind without `group`, a pairwise message with a
    /// `group`, a pairwise kind without `recipient`, a group message with one.
    case inconsistentFields(String)
    /// The body is longer than `MessageEnvelope.maximumBodyByteCount` bytes (`found`).
    case bodyTooLong(found: Int)

    /// A short description (field names and sizes only).
    public var description: String {
        switch self {
        case .notAJSONObject: return "the envelope is not a JSON object"
        case let .textTooLong(found): return "the envelope text has \(found) bytes (at most \(MessageEnvelope.maximumTextByteCount))"
        case let .unsupportedVersion(found): return "envelope version \(found) is not supported (this library reads \(MessageEnvelope.version))"
        case let .missingField(name): return "the envelope has no field \"\(name)\""
        case let .unknownField(name): return "the envelope has an unknown field \"\(name)\""
        case let .repeatedField(name): return "the envelope repeats the field \"\(name)\""
        case let .invalidField(name): return "the envelope's field \"\(name)\" is invalid"
        case let .inconsistentFields(why): return "the envelope's fields do not fit its kind: \(why)"
        case let .bodyTooLong(found): return "the envelope body has \(found) bytes (at most \(MessageEnvelope.maximumBodyByteCount))"
        }
    }

    /// The description as a sentence.
    public var errorDescription: String? { "Invalid message envelope: \(description)." }
}
