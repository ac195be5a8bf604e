/// A message `SessionManager.receive(_:)` could not decrypt because this device's state for
/// its sender is lost or unusable (SPEC §9): what to tell the user, what to send the sender,
/// and whether to start a new session with it.
///
/// `receive` returns one (instead of throwing) for exactly the failures that SPEC §9 answers
/// with a retry notice: for a pairwise message (or a sender-key distribution) `noSession`,
/// `unknownPreKey`, `tooManySkippedMessages`, and `invalidMessage` on a ratchet key that no
/// session with the sender knows; for a group message `messageKeyUnavailable`,
/// `tooManySkippedMessages`, and `unknownChain` that persists after
/// `SessionManager.distributionWait` (the message stays kept until its distribution arrives).
/// Every other failure is thrown as before (a duplicate, a forgery, a malformed message get no
/// notice). Acknowledge the message to the server either way; nothing of this device's
/// sessions or chains changed (only the manager's own note of what it sent, below).
public struct UndecryptableMessage: Sendable, CustomStringConvertible {
    /// The device the message came from (as the transport said).
    public let sender: ProtocolAddress
    /// The group, for a group message.
    public let group: GroupID?
    /// Why the message did not decrypt (its `disposition` still applies: for `unknownChain` the
    /// message is kept and released with the distribution).
    public let error: SessionError
    /// The retry notice to send to `sender` (an envelope of kind `.retryNotice`, to be sent like
    /// any other), or `nil` when none is due: one was already sent for this ratchet key or group
    /// chain, or another went to this device in the last hour, or no identity key is known for
    /// the sender (no session, no trust record, no prekey message to take it from).
    public let retryNotice: MessageEnvelope?
    /// Whether to start a new session with `sender` now (fetch its bundle, then
    /// `SessionManager.processBundle(_:for:)`): `true` for `noSession` and `unknownPreKey`, at
    /// most once per hour per device. The failure is unauthenticated input, so the library, not
    /// the message, decides how often it costs the sender a one-time prekey.
    public let startsNewSession: Bool
    /// Whether the message was shown to come from `sender`: a group message whose signature
    /// verified before it failed (`messageKeyUnavailable`, `tooManySkippedMessages`), so a real
    /// message was lost. `false` for every pairwise failure and for a group message whose chain
    /// is missing: nothing of such bytes is authenticated, and they may be noise (a forgery,
    /// corruption, a replay of something long gone) as well as a lost message. Show those as a
    /// quiet placeholder ("a message may have been lost"), not as an alarm.
    public let isAuthenticated: Bool

    /// An undecryptable message.
    init(
        sender: ProtocolAddress, group: GroupID?, error: SessionError, retryNotice: MessageEnvelope?, startsNewSession: Bool,
        isAuthenticated: Bool = false
    ) {
        self.sender = sender
        self.group = group
        self.error = error
        self.retryNotice = retryNotice
        self.startsNewSession = startsNewSession
        self.isAuthenticated = isAuthenticated
    }

    /// The sender, the error and what is due.
    public var description: String {
        "UndecryptableMessage(from: \(sender)\(group.map { " in \($0)" } ?? ""), \(error), notice: \(retryNotice == nil ? "none" : "due"), "
            + "new session: \(startsNewSession), authenticated: \(isAuthenticated))"
    }
}
