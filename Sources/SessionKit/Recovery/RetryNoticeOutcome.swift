import SignalPrimitives

/// What `SessionManager.receive(_:)` did with a retry notice (SPEC §9): a peer device could not
/// decrypt a message from this device and asked it to act.
public struct RetryNoticeOutcome: Sendable, CustomStringConvertible {
    /// What was done.
    public enum Action: Sendable, CustomStringConvertible {
        /// A pairwise notice for the chain this device sends on now: the session with the sender
        /// was archived (it still decrypts late messages but never becomes current again). The
        /// next message to the sender needs a new session: fetch its bundle and call
        /// `SessionManager.processBundle(_:for:)`, then send again what the sender missed.
        /// `peerReregistered`: the session had recorded another registration id than the
        /// notice's, so the sender was reinstalled or restored (refresh its bundle and device
        /// list).
        case sessionArchived(peerReregistered: Bool)
        /// A pairwise notice for a chain this device no longer sends on with the sender (it has
        /// moved on, for example to the session the sender started after it lost its state,
        /// before its notice arrived): no session changed, and `resend` holds the messages the
        /// send log kept for that chain, taken out of the log (a replay of the notice gets
        /// nothing). Send them again in the current session with
        /// `SessionManager.resendLoggedMessages(_:to:)`.
        case loggedMessagesReturned
        /// A group notice for the chain this device still sends on in that group, from a member:
        /// the current distribution was encrypted to the sender again (send `distribution`'s
        /// envelope; its `error` says why it could not be, for example `noSession`).
        case distributionResent(DeviceEncryption)
        /// The notice would have made this device act, but a notice from the same device already
        /// did in the last hour (`RecoveryMarks.interval`): nothing changed. A later notice can.
        case rateLimited
        /// The notice names the key of a sender that is not the one on record for its user (a
        /// reinstall with a new identity, or someone else): nothing was done. Ask the user about
        /// the new key (`SessionManager.acceptIdentityChange(_:forUser:)`) before anything is
        /// sent to the device again.
        case untrustedIdentity(Ed25519.PublicKey)
        /// Nothing to do: this device has moved on from the named chain (a replayed or late
        /// notice), no longer sends on the group chain, or the sender is not a member.
        case ignored

        /// The action's name.
        public var description: String {
            switch self {
            case let .sessionArchived(reregistered): return "sessionArchived(peerReregistered: \(reregistered))"
            case let .distributionResent(outcome): return "distributionResent(\(outcome))"
            case .loggedMessagesReturned: return "loggedMessagesReturned"
            case .rateLimited: return "rateLimited"
            case .untrustedIdentity: return "untrustedIdentity"
            case .ignored: return "ignored"
            }
        }
    }

    /// The device that sent the notice (it could not decrypt).
    public let sender: ProtocolAddress
    /// The group of a group notice.
    public let group: GroupID?
    /// The sender's registration id, as the notice says.
    public let registrationID: RegistrationID
    /// What was done.
    public let action: Action
    /// The messages to send the notice's sender again, from the manager's send log (SPEC §9;
    /// empty when the manager keeps no log, or nothing was done), oldest first:
    /// - after `sessionArchived`, every message logged on the archived session's sending chain
    ///   (the chain the sender never answered on, so none of them is known to have been read;
    ///   the notice's failed message is the one at `failedPosition`, and a sender that lost its
    ///   state after reading the first ones gets those again). They are removed from the log:
    ///   once a new session exists, encrypt them again to `sender` with
    ///   `SessionManager.resendLoggedMessages(_:to:)`, which sends each only into a session
    ///   under the identity key it was first sent under (SPEC §9).
    /// - after `loggedMessagesReturned`, the same for a chain this device had already left:
    ///   send them with `resendLoggedMessages(_:to:)` in the current session.
    /// - in either case, only messages sent under the notice's identity key (the sender's key
    ///   on record): a device under another key never gets what the old one was sent.
    /// - after `distributionResent`, the group messages logged on the chain from the notice's
    ///   iteration, or from the sender's join point in the chain when that is later (SPEC §9:
    ///   the first iteration encrypted while it was a member; what was said before it joined
    ///   is never re-sent to it, and nothing is without a join point), up to the resent
    ///   distribution's: a distribution holds the chain key at its
    ///   own iteration only, so the sender cannot decrypt any of them with it (the ones it kept
    ///   waiting for the chain are dropped when it arrives). SPEC §9 lets this device send them
    ///   to the sender alone, pairwise (`resendLoggedMessages(_:to:)`). They stay in the log (other members
    ///   may ask too). A member that held the chain but could not use one iteration may have
    ///   read later ones: put an id of your own in the content that the receiving app
    ///   deduplicates.
    public let resend: [SendLogEntry]
    /// The position the notice names: the failed message's counter (header.n) or group
    /// iteration.
    public let failedPosition: UInt32

    /// An outcome.
    init(
        sender: ProtocolAddress, group: GroupID?, registrationID: RegistrationID, action: Action, resend: [SendLogEntry] = [],
        failedPosition: UInt32 = 0
    ) {
        self.sender = sender
        self.group = group
        self.registrationID = registrationID
        self.action = action
        self.resend = resend
        self.failedPosition = failedPosition
    }

    /// The sender, group and action.
    public var description: String {
        "RetryNoticeOutcome(from: \(sender)\(group.map { " in \($0)" } ?? ""), registrationID: \(registrationID), \(action), "
            + "resend: \(resend.count))"
    }
}
