import SignalPrimitives

/// Everything held for one peer device: the current session and up to
/// `ProtocolLimits.maxPreviousSessions` (40, as libsignal) previous ones, most recent first.
///
/// To an app and to a store, a record is an opaque value: `SessionManager` loads it, works on
/// it and commits it (`ProtocolStore.commit(_:)`); a store persists it with `serialized()` and
/// `init(serialized:)` and maintains its `generation`. (A store that keeps a record in parts
/// uses the `@_spi(Storage)` API: `currentSession`, `previousSessions`,
/// `init(restoringCurrentSession:previousSessions:)`.) The routing below is what the manager
/// runs.
///
/// Previous sessions exist because both sides may start a session at about the same time, or
/// a peer may start a new one (after a reinstall, or from a newer bundle) while messages of
/// the old one are still in flight: those still decrypt. Sending always uses the current
/// session. Beyond 40 previous sessions the oldest is dropped.
///
/// Decryption (`decrypt`) routes a message (SPEC §3 "Sessions per address"):
/// - a prekey message goes to the session, current or previous, created from the same EK_A
///   (whose whole prefix must then match, else `invalidMessage`); a previous one that
///   decrypts becomes current again. With no such session, X3DH runs (`SessionState.accept`)
///   and the new session becomes current, the old current one becoming the most recent
///   previous one;
/// - a ratchet message is tried on the current session, then on the previous ones, most recent
///   first; a previous session that decrypts becomes current (as in libsignal: the peer is
///   using that session, so replies go to it and both sides converge on one session). A
///   session that knows the message's ratchet key decides the outcome.
///
/// **The bound on forged messages.** A ratchet message whose ratchet key no session knows
/// needs a DH step (and up to 2 × `maxSkip` chain steps) in each session it is tried on. To
/// keep a forged message as cheap with 40 previous sessions as with none, such a message is
/// tried with a DH step on the current session and on the most recent previous session only,
/// and on the latter only when it skips no key on that session's old receiving chain
/// (header.pn equal to its receiving counter): that is the step two devices that started
/// sessions at the same time need to converge, and all SPEC §3 lets a vector rely on. Sessions
/// that know the ratchet key are found without any DH or chain step. So a forged message costs
/// at most one full trial plus one DH step and `maxSkip` chain steps, whatever the number of
/// previous sessions; a message for an older previous session on a new ratchet key is
/// `invalidMessage` (its sender's next prekey or reply resolves it).
///
/// **Post-quantum.** A record is *pinned* to post-quantum sessions (`requiresPostQuantum`)
/// once it has held a post-quantum session (`SessionState.isPostQuantum`): from then on a
/// classic session started from a bundle (`promote`) is refused with `postQuantumRequired`,
/// so that a server replaying the device's old classic bundle cannot downgrade it. The pin is
/// persisted with the record and lasts as long as the record (deleting the record clears it).
/// With `SessionConfiguration.requirePostQuantum`, `encrypt` refuses a classic current
/// session and `decrypt` refuses a message that a classic session (current or previous)
/// decrypts, both with `postQuantumRequired`, leaving the record unchanged.
///
/// A value type, transactional: when `decrypt` or `encrypt` throws, the record (and its
/// serialization) is exactly what it was, nothing is reported consumed and nothing was drawn
/// from the random source.
public struct SessionRecord: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What `decrypt` produced.
    @_spi(Testing) public struct Decryption: Sendable, CustomStringConvertible {
        /// The plaintext.
        public internal(set) var plaintext: [UInt8]
        /// What X3DH used up and recorded, when it ran: apply it in the same store write that
        /// stores the record (`ProtocolStore.commit(_:)`).
        public let consumption: PreKeyConsumption?
        /// Whether a previous session decrypted the message and became current again.
        public let promotedPreviousSession: Bool
        /// The peer's identity key in the session that decrypted the message (now current,
        /// unless a retry notice archived it).
        public let remoteIdentityKey: Ed25519.PublicKey
        /// The session that decrypted the message, as it is after the decryption.
        let session: SessionState

        /// The peer's registration id in the session that decrypted the message (SPEC §9).
        public var remoteRegistrationID: RegistrationID? { session.remoteRegistrationID }

        /// Whether X3DH ran and created the (now current) session.
        public var establishedSession: Bool { consumption != nil }

        /// Overwrites the plaintext with zeros (in place when this value holds the only
        /// reference to it).
        public mutating func wipePlaintext() { SecureMemory.zero(&plaintext) }

        /// Whether the current session changed: established or promoted.
        public var changedCurrentSession: Bool { establishedSession || promotedPreviousSession }

        /// A short description without the plaintext.
        public var description: String {
            "SessionRecord.Decryption(\(plaintext.count) bytes, \(consumption.map(\.description) ?? "no X3DH"), "
                + "promoted: \(promotedPreviousSession))"
        }
    }

    /// The sessions, the pin and the recovery marks, held in one reference: a copy of a record
    /// (a store handing it out, a commit holding it, a batch of records) retains one object
    /// instead of each part of each session, and moves 8 bytes instead of the sessions. A change
    /// copies the parts first when another copy of the record shares them (copy on write), so
    /// the record keeps value semantics.
    ///
    /// `@unchecked Sendable`: an instance is changed only while one record holds it (the
    /// setters below copy it otherwise), so no two threads ever see it change.
    private final class Parts: @unchecked Sendable {
        var currentSession: SessionState?
        var previousSessions: [SessionState]
        var requiresPostQuantum: Bool
        var recoveryMarks: RecoveryMarks

        init(currentSession: SessionState?, previousSessions: [SessionState], requiresPostQuantum: Bool, recoveryMarks: RecoveryMarks) {
            self.currentSession = currentSession
            self.previousSessions = previousSessions
            self.requiresPostQuantum = requiresPostQuantum
            self.recoveryMarks = recoveryMarks
        }

        func copy() -> Parts {
            Parts(currentSession: currentSession, previousSessions: previousSessions, requiresPostQuantum: requiresPostQuantum, recoveryMarks: recoveryMarks)
        }
    }

    private var parts: Parts

    /// `parts`, copied first when another record shares it.
    private mutating func uniqueParts() -> Parts {
        if !isKnownUniquelyReferenced(&parts) { parts = parts.copy() }
        return parts
    }

    /// The session used to send, if any.
    @_spi(Storage) @_spi(Testing) public private(set) var currentSession: SessionState? {
        get { parts.currentSession }
        set { uniqueParts().currentSession = newValue }
        _modify {
            let parts = uniqueParts()
            yield &parts.currentSession
        }
    }
    /// Earlier sessions that can still decrypt, most recent first (at most
    /// `ProtocolLimits.maxPreviousSessions`).
    @_spi(Storage) @_spi(Testing) public private(set) var previousSessions: [SessionState] {
        get { parts.previousSessions }
        set { uniqueParts().previousSessions = newValue }
        _modify {
            let parts = uniqueParts()
            yield &parts.previousSessions
        }
    }

    /// Whether this peer device is pinned to post-quantum sessions: set once the record held a
    /// post-quantum session (created here or loaded), never cleared while the record exists.
    /// A classic session from a bundle is then refused (`promote`: `postQuantumRequired`).
    @_spi(Storage) @_spi(Testing) public private(set) var requiresPostQuantum: Bool {
        get { parts.requiresPostQuantum }
        set { uniqueParts().requiresPostQuantum = newValue }
    }

    /// What the manager remembers about recovery with this device (SPEC §9: notices sent and
    /// acted on, advice to start a new session), persisted with the record. A record may hold
    /// marks and no session (a device that sent a message this one could not decrypt).
    @_spi(Storage) @_spi(Testing) public internal(set) var recoveryMarks: RecoveryMarks {
        get { parts.recoveryMarks }
        set { uniqueParts().recoveryMarks = newValue }
        _modify {
            let parts = uniqueParts()
            yield &parts.recoveryMarks
        }
    }

    /// An empty record: no session.
    @_spi(Testing) public init() {
        parts = Parts(currentSession: nil, previousSessions: [], requiresPostQuantum: false, recoveryMarks: RecoveryMarks())
    }

    /// A record whose current session is `session`.
    @_spi(Testing) public init(currentSession session: SessionState) {
        parts = Parts(currentSession: session, previousSessions: [], requiresPostQuantum: session.isPostQuantum, recoveryMarks: RecoveryMarks())
    }

    /// Reassembles a record a store kept in parts: `current` and `previous` (most recent
    /// first), as `currentSession` and `previousSessions` were, the pin
    /// (`requiresPostQuantum`, as it was stored; a record holding a post-quantum session is
    /// pinned whatever is passed) and the recovery marks.
    /// - Throws: `SessionError.invalidPayload` for more than
    ///   `ProtocolLimits.maxPreviousSessions` previous sessions or two copies of one session
    ///   (the same role and base key), which `serialized()` could not have written either.
    @_spi(Storage) @_spi(Testing) public init(
        restoringCurrentSession current: SessionState?, previousSessions previous: [SessionState], requiresPostQuantum: Bool = false,
        recoveryMarks: RecoveryMarks = RecoveryMarks()
    ) throws(SessionError) {
        let all = (current.map { [$0] } ?? []) + previous
        guard previous.count <= ProtocolLimits.maxPreviousSessions,
              Set(all.map { [$0.role.rawValue] + $0.baseKey.rawRepresentation }).count == all.count else {
            throw .invalidPayload
        }
        self.init(currentSession: current, previousSessions: previous, requiresPostQuantum: requiresPostQuantum, recoveryMarks: recoveryMarks)
    }

    /// Assembles a record from its parts (persistence); `previous` is already bounded. The
    /// record is pinned when `requiresPostQuantum` says so or when it holds a post-quantum
    /// session.
    init(
        currentSession: SessionState?, previousSessions: [SessionState], requiresPostQuantum: Bool = false,
        recoveryMarks: RecoveryMarks = RecoveryMarks()
    ) {
        parts = Parts(
            currentSession: currentSession, previousSessions: previousSessions,
            requiresPostQuantum: requiresPostQuantum || currentSession?.isPostQuantum == true || previousSessions.contains { $0.isPostQuantum },
            recoveryMarks: recoveryMarks)
    }

    /// Applies `change` in place to the current session (when `current`) and to the previous
    /// sessions at `previousIndices`.
    mutating func mapSessions(current: Bool, previousIndices: some Sequence<Int>, _ change: (inout SessionState) -> Void) {
        if current, var session = currentSession {
            currentSession = nil
            change(&session)
            currentSession = session
        }
        // Only when a previous session changes: the uniqueness check of the array (a copy of
        // up to 40 sessions when the array is shared) would otherwise run, hoisted out of the loop.
        let indices = previousIndices.filter { previousSessions.indices.contains($0) }
        guard !indices.isEmpty else { return }
        for index in indices { change(&previousSessions[index]) }
    }

    /// Whether this record was loaded with its current session only (`init(currentSessionOnly:…)`,
    /// a store's fast path for a message the current session decides): its previous sessions
    /// are in the store but not here. Such a record may decrypt with its current session and
    /// encrypt; anything that needs the previous sessions (a message the current session does
    /// not decrypt, X3DH, archiving, setting a session aside) needs the whole record, and a
    /// store commits only the current session of it.
    @_spi(Storage) @_spi(Testing) public private(set) var omitsPreviousSessions = false

    /// A record loaded with its current session only (`omitsPreviousSessions`).
    @_spi(Storage) @_spi(Testing) public init(
        currentSessionOnly current: SessionState, requiresPostQuantum: Bool, recoveryMarks: RecoveryMarks = RecoveryMarks()
    ) {
        self.init(currentSession: current, previousSessions: [], requiresPostQuantum: requiresPostQuantum, recoveryMarks: recoveryMarks)
        omitsPreviousSessions = true
    }

    /// Whether the record holds no session at all.
    @_spi(Testing) public var isEmpty: Bool { currentSession == nil && previousSessions.isEmpty }

    /// The peer's identity key in the current session.
    @_spi(Testing) public var remoteIdentityKey: Ed25519.PublicKey? { currentSession?.remoteIdentityKey }

    /// Makes `session` current (for example one just started from a bundle); the current
    /// session becomes the most recent previous one and the oldest beyond the limit is dropped.
    /// A session the record already holds (the same role and base key) is moved, not copied,
    /// so the record never holds two versions of one session (such a record could not be
    /// loaded back).
    /// - Throws: `SessionError.postQuantumRequired` when the record is pinned to post-quantum
    ///   sessions (`requiresPostQuantum`) and `session` is classic; `SessionError.staleState`
    ///   when the record holds the same session with a higher `SessionState.generation`
    ///   (`session` is an older copy: making it current would reuse message keys and revive
    ///   consumed ones). The record is then unchanged.
    @_spi(Testing) public mutating func promote(_ session: SessionState) throws(SessionError) {
        // A record without its previous sessions cannot place a session (load it whole).
        if omitsPreviousSessions { throw .staleState }
        try checkPostQuantumPin(for: session)
        let held = currentSession.map { [$0] + previousSessions } ?? previousSessions
        if held.contains(where: { $0.isSameSession(as: session) && $0.generation > session.generation }) { throw .staleState }
        place(session)
    }

    /// Throws `postQuantumRequired` when this record is pinned to post-quantum sessions and
    /// `session` is classic (a bundle for this device without a KEM prekey: SPEC §3
    /// "Downgrades"; the app's `SessionManager.processBundle` checks it before the trust
    /// evaluator).
    func checkPostQuantumPin(for session: SessionState) throws(SessionError) {
        if requiresPostQuantum, !session.isPostQuantum { throw .postQuantumRequired }
    }

    /// Throws `postQuantumRequired` when `configuration` requires post-quantum sessions and the
    /// current session, which `encrypt` would use, is classic. Nothing without a current session.
    func checkSendingPolicy(_ configuration: SessionConfiguration) throws(SessionError) {
        if configuration.requirePostQuantum, currentSession?.isPostQuantum == false { throw .postQuantumRequired }
    }

    /// `promote` for a session this record produced itself (never older than the held copy).
    /// A post-quantum session pins the record.
    mutating func place(_ session: SessionState) {
        if session.isPostQuantum { requiresPostQuantum = true }
        previousSessions.removeAll { $0.isSameSession(as: session) }
        if let current = currentSession, current.isSameSession(as: session) {
            currentSession = session
            return
        }
        archiveCurrentSession()
        currentSession = session
    }

    /// The store generation of this record: how many times a store replaced it. Stores
    /// maintain it (it is not part of `serialized()`): a record loaded from a store carries
    /// the stored generation, and `ProtocolStore.commit` writes it back only when the stored
    /// generation is still this one (compare-and-swap), storing it with generation + 1;
    /// otherwise the write is `SessionError.staleState`. A new record has generation 0, which
    /// matches only an address with no stored record.
    public var generation: UInt64 = 0

    /// Archives the current session because of a retry notice (SPEC §9): it is marked
    /// (`SessionState.isArchived`, persisted) and moved to the previous sessions, where it still
    /// decrypts late messages but never becomes current again; the next message sent needs a
    /// new session (`noSession` until then). Returns the archived session (`nil` without a
    /// current session: nothing changes).
    @discardableResult
    mutating func archiveCurrentSessionForRetryNotice() -> SessionState? {
        guard var current = currentSession else { return nil }
        current.isArchived = true
        currentSession = current
        archiveCurrentSession()
        return current
    }

    /// Moves the current session to the previous ones, so that the next message sent needs a
    /// new session (`noSession` until then). Messages of the archived session still decrypt.
    @_spi(Testing) public mutating func archiveCurrentSession() {
        guard let current = currentSession else { return }
        currentSession = nil
        previousSessions.insert(current, at: 0)
        if previousSessions.count > ProtocolLimits.maxPreviousSessions {
            previousSessions.removeLast(previousSessions.count - ProtocolLimits.maxPreviousSessions)
        }
    }

    /// Undoes what a decryption did to which session is current, keeping its work: the session
    /// that decrypted (now current) goes back among the previous sessions, most recent first,
    /// and `original` (the current session before the decryption, which the decryption did not
    /// change) is current again. Used for a message whose identity key is not the user's on
    /// record (`SessionManager`'s quarantine): its session must not become the one we send to.
    /// Does nothing when the current session is `original`'s session.
    mutating func setAsideCurrentSession(restoring original: SessionState?) {
        guard let session = currentSession else { return }
        if let original, original.isSameSession(as: session) { return }
        currentSession = nil
        if let original { previousSessions.removeAll { $0.isSameSession(as: original) } }
        previousSessions.insert(session, at: 0)
        currentSession = original
        if previousSessions.count > ProtocolLimits.maxPreviousSessions {
            previousSessions.removeLast(previousSessions.count - ProtocolLimits.maxPreviousSessions)
        }
    }

    /// Removes every session whose peer identity key is not `identityKey` (the user's key the
    /// app accepted, or restored by rejecting a change). When no session is current any more
    /// (the current one went, or a quarantined message's session was only set aside), the most
    /// recent remaining one that no retry notice archived becomes current. Returns whether
    /// anything changed.
    mutating func retainSessions(withRemoteIdentity identityKey: Ed25519.PublicKey) -> Bool {
        let before = previousSessions.count + (currentSession == nil ? 0 : 1)
        previousSessions.removeAll { $0.remoteIdentityKey != identityKey }
        if let current = currentSession, current.remoteIdentityKey != identityKey { currentSession = nil }
        // A quarantined message's session was set aside, never current: it may be the one left.
        var promoted = false
        if currentSession == nil, let index = previousSessions.firstIndex(where: { !$0.isArchived }) {
            currentSession = previousSessions.remove(at: index)
            promoted = true
        }
        return promoted || previousSessions.count + (currentSession == nil ? 0 : 1) != before
    }

    /// Whether a session of this record (current or previous) was created by a prekey
    /// message with `prefix`'s EK_A: such a message is decrypted by that session, without X3DH
    /// and without prekeys.
    @_spi(Testing) public func holdsSession(createdBy prefix: PreKeyMessage.Prefix) -> Bool {
        if currentSession?.isCreated(byPreKeyMessageWith: prefix) == true { return true }
        return previousSessions.contains { $0.isCreated(byPreKeyMessageWith: prefix) }
    }

    // MARK: Encrypt

    /// Encrypts `plaintext` with the current session (SPEC §4; a prekey message while the
    /// current session is an initiator that has had no reply), padded with `contentType` as
    /// its first byte (SPEC §2). With `requirePostQuantum`, a classic current session is not
    /// used.
    /// - Throws: `SessionError.noSession` without a current session, `.postQuantumRequired`
    ///   when `requirePostQuantum` is on and the current session is classic, else the errors
    ///   of `SessionState.encrypt(_:contentType:)`. The record is unchanged when it throws.
    @_spi(Testing) public mutating func encrypt(
        _ plaintext: [UInt8], contentType: MessagePadding.ContentType = .application, requirePostQuantum: Bool = false
    ) throws(SessionError) -> [UInt8] {
        guard var session = currentSession else { throw .noSession }
        if requirePostQuantum, !session.isPostQuantum { throw .postQuantumRequired }
        // Drop the record's reference so the session's storage is mutated in place; a failed
        // encrypt leaves `session` unchanged, and either way it is put back.
        currentSession = nil
        defer { currentSession = session }
        return try session.encrypt(plaintext, contentType: contentType)
    }

    // MARK: Decrypt

    /// Decrypts `bytes` from this record's peer device, routing it as the type documentation
    /// says. `identity`, `localAddress` (B), `preKeys` and `kem` are ours, used when a prekey
    /// message needs X3DH; `remoteAddress` (A) is the address the message came from, as the
    /// transport says (a wrong one makes X3DH and every session fail to authenticate);
    /// `configuration` applies to a session created here, and with its `requirePostQuantum` a
    /// message that a classic session decrypts is refused (`postQuantumRequired`: such a
    /// session is neither used nor made current, the record is unchanged and nothing is drawn
    /// from `random`; a message on a post-quantum session that takes a DH step is then
    /// decrypted twice, the first time on a copy). The padded plaintext must have
    /// `contentType` as its first byte (SPEC §2: `.senderKeyDistribution` only where a
    /// distribution is processed); a message of another content type counts as not decrypted
    /// by the session that opened it, and is `invalidPadding`.
    /// - Throws: `SessionError` with the SPEC §8 names, in SPEC §4's order: `unsupportedVersion`,
    ///   `invalidMessage`, `invalidKey` (decoding); `noSession` (a ratchet message and no
    ///   session); `unknownPreKey`, `duplicateMessage` (the EK_A record); then `invalidMessage`,
    ///   `duplicateMessage`, `tooManySkippedMessages`, `invalidKey`, `invalidPadding`; the
    ///   library's `postQuantumRequired` (also for a message a classic session decrypted, with
    ///   `requirePostQuantum`) and `kemUnavailable`; or `primitive`. The record is unchanged
    ///   when it throws.
    @_spi(Testing) public mutating func decrypt(
        _ bytes: [UInt8], identity: IdentityKeyPair, localAddress: ProtocolAddress, remoteAddress: ProtocolAddress,
        preKeys: some PreKeyLookup, kem: (any KeyEncapsulationMechanism)? = nil,
        configuration: SessionConfiguration = .default, random: any RandomSource = SystemRandomSource(),
        contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) -> Decryption {
        try decrypt(
            IncomingMessage(serialized: bytes), identity: identity, localAddress: localAddress, remoteAddress: remoteAddress,
            preKeys: preKeys, kem: kem, configuration: configuration, random: random, contentType: contentType)
    }

    /// Decrypts an already decoded message; see `decrypt(_: [UInt8], …)`.
    /// - Throws: as `decrypt(_: [UInt8], …)`, except the decoding errors. The record is
    ///   unchanged when it throws.
    @_spi(Testing) public mutating func decrypt(
        _ message: IncomingMessage, identity: IdentityKeyPair, localAddress: ProtocolAddress, remoteAddress: ProtocolAddress,
        preKeys: some PreKeyLookup, kem: (any KeyEncapsulationMechanism)? = nil,
        configuration: SessionConfiguration = .default, random: any RandomSource = SystemRandomSource(),
        contentType: MessagePadding.ContentType = .application
    ) throws(SessionError) -> Decryption {
        var runsX3DH = false
        if case let .preKey(preKeyMessage) = message { runsX3DH = !holdsSession(createdBy: preKeyMessage.prefix) }
        // Without the requirement, or for X3DH (which creates only post-quantum sessions under
        // it, refusing a classic prefix before any work), the routing alone decides.
        guard configuration.requirePostQuantum, !runsX3DH else {
            return try route(message, identity: identity, localAddress: localAddress, remoteAddress: remoteAddress,
                             preKeys: preKeys, kem: kem, configuration: configuration, random: random, contentType: contentType)
        }
        // A message that a classic session decrypts is refused, and a refused message must
        // draw nothing from `random` (SPEC §4: a failed decryption draws no key), so the
        // routing runs first on a copy with keys drawn from the system: the session that
        // decrypted is the decryption's (the copy's current one, unless a retry notice archived
        // it). Its outcome does not depend on the keys drawn (they are drawn after the message
        // authenticated), so only a post-quantum session that took a DH step (drew a key) runs
        // again, with `random`.
        var probe = self
        var decryption = try probe.route(
            message, identity: identity, localAddress: localAddress, remoteAddress: remoteAddress, preKeys: preKeys, kem: kem,
            configuration: configuration, random: SystemRandomSource(), contentType: contentType)
        let decider = decryption.session
        guard decider.isPostQuantum else {
            decryption.wipePlaintext()
            throw .postQuantumRequired
        }
        let held = (currentSession.map { [$0] } ?? []) + previousSessions
        let before = held.first { $0.isSameSession(as: decider) }
        guard before?.ratchet.sendingRatchetKey.publicKey != decider.ratchet.sendingRatchetKey.publicKey else {
            self = probe
            return decryption
        }
        decryption.wipePlaintext()
        return try route(message, identity: identity, localAddress: localAddress, remoteAddress: remoteAddress,
                         preKeys: preKeys, kem: kem, configuration: configuration, random: random, contentType: contentType)
    }

    /// `decrypt`'s routing (see the type's documentation), without the post-quantum requirement
    /// on existing sessions.
    private mutating func route(
        _ message: IncomingMessage, identity: IdentityKeyPair, localAddress: ProtocolAddress, remoteAddress: ProtocolAddress,
        preKeys: some PreKeyLookup, kem: (any KeyEncapsulationMechanism)?, configuration: SessionConfiguration,
        random: any RandomSource, contentType: MessagePadding.ContentType
    ) throws(SessionError) -> Decryption {
        switch message {
        case let .ratchet(ratchetMessage):
            return try decryptRatchetMessage(message, ratchetMessage, random: random, contentType: contentType)
        case let .preKey(preKeyMessage):
            if let decryption = try decryptWithSessionCreated(by: preKeyMessage, message, random: random, contentType: contentType) {
                return decryption
            }
            let established = try SessionState.accept(
                preKeyMessage, identity: identity, localAddress: localAddress, remoteAddress: remoteAddress,
                preKeys: preKeys, kem: kem, configuration: configuration, random: random, contentType: contentType)
            place(established.session)
            return Decryption(
                plaintext: established.plaintext, consumption: established.consumption, promotedPreviousSession: false,
                remoteIdentityKey: established.session.remoteIdentityKey, session: established.session)
        }
    }

    private mutating func decryptRatchetMessage(
        _ message: IncomingMessage, _ ratchetMessage: RatchetMessage, random: any RandomSource,
        contentType: MessagePadding.ContentType
    ) throws(SessionError) -> Decryption {
        var currentError: SessionError?
        // A late message for an older session (its ratchet key known there, not here) goes
        // straight to that session: trying it here would cost a DH step and key derivations and
        // could only fail (the session that knows the key decides, SPEC §3).
        let olderSessionKnowsKey = currentSession.map { !$0.recognizesRatchetKey(of: ratchetMessage) } ?? false
            && previousSessions.indices.contains { previousSessions[$0].recognizesRatchetKey(of: ratchetMessage) }
        if !olderSessionKnowsKey, var session = currentSession {
            currentSession = nil
            do throws(SessionError) {
                let plaintext = try session.decrypt(message, random: random, contentType: contentType)
                currentSession = session
                return Decryption(plaintext: plaintext, existingSession: session, promoted: false)
            } catch {
                currentSession = session
                if session.recognizesRatchetKey(of: ratchetMessage) { throw error }
                currentError = error
            }
        }
        for index in previousSessions.indices {
            let knowsKey = previousSessions[index].recognizesRatchetKey(of: ratchetMessage)
            guard knowsKey || previousSessions[index].mayTakeDHStep(for: ratchetMessage, isMostRecentPrevious: index == 0) else {
                continue
            }
            do throws(SessionError) {
                return try decryptWithPreviousSession(at: index, message, random: random, contentType: contentType)
            } catch {
                // A failed decrypt leaves the session unchanged (it is transactional).
                if knowsKey { throw error }
            }
        }
        throw currentError ?? .noSession
    }

    /// Decrypts with the previous session at `index`; when it succeeds, that session becomes
    /// current again (`place` takes it out of the previous sessions), unless a retry notice
    /// archived it (SPEC §9): an archived session is updated where it is and never becomes
    /// current again. When it throws, the record is unchanged.
    private mutating func decryptWithPreviousSession(
        at index: Int, _ message: IncomingMessage, random: any RandomSource, contentType: MessagePadding.ContentType
    ) throws(SessionError) -> Decryption {
        var session = previousSessions[index]
        let plaintext = try session.decrypt(message, random: random, contentType: contentType)
        guard !session.isArchived else {
            previousSessions[index] = session
            return Decryption(plaintext: plaintext, existingSession: session, promoted: false)
        }
        place(session)
        return Decryption(plaintext: plaintext, existingSession: session, promoted: true)
    }

    /// Decrypts a prekey message with the session (current or previous) created from the same
    /// EK_A, if the record holds one; returns `nil` when it holds none.
    private mutating func decryptWithSessionCreated(
        by preKeyMessage: PreKeyMessage, _ message: IncomingMessage, random: any RandomSource,
        contentType: MessagePadding.ContentType
    ) throws(SessionError) -> Decryption? {
        let prefix = preKeyMessage.prefix
        if var session = currentSession, session.isCreated(byPreKeyMessageWith: prefix) {
            currentSession = nil
            defer { currentSession = session }
            do {
                let plaintext = try session.decrypt(message, random: random, contentType: contentType)
                return Decryption(plaintext: plaintext, existingSession: session, promoted: false)
            } catch {
                throw Self.replayed(error, preKeyMessage, session: session)
            }
        }
        if let index = previousSessions.firstIndex(where: { $0.isCreated(byPreKeyMessageWith: prefix) }) {
            do {
                return try decryptWithPreviousSession(at: index, message, random: random, contentType: contentType)
            } catch {
                throw Self.replayed(error, preKeyMessage, session: previousSessions[index])
            }
        }
        return nil
    }

    /// A prekey message routed to the session its EK_A created, which fails there: when that
    /// session no longer knows the message's ratchet key (the initiator's first one, the only
    /// key prekey messages carry), the session has moved past the chain the message belongs to
    /// and holds no skipped key for it, so the message was decrypted before: a recognised
    /// replay is `duplicateMessage` (SPEC §4 lets a message of an older chain whose key is gone
    /// fail with any error). A prefix with the same EK_A but other bytes is not the one that
    /// created the session (`invalidMessage` stays). Any other failure is reported as it is.
    private static func replayed(_ error: SessionError, _ message: PreKeyMessage, session: SessionState) -> SessionError {
        // Only the prefix that created the session (all of it, not only its EK_A) names it.
        guard error == .invalidMessage, ConstantTime.equals(message.prefix.digest, session.preKeyPrefixDigest),
              !session.recognizesRatchetKey(of: message.message) else { return error }
        return .duplicateMessage
    }

    /// The number of sessions and the current one, never a secret.
    public var description: String {
        "SessionRecord(current: \(currentSession.map(\.description) ?? "none"), previous: \(previousSessions.count), "
            + "requiresPostQuantum: \(requiresPostQuantum))"
    }
    /// A redacted description.
    public var debugDescription: String { description }
}

extension SessionRecord.Decryption {
    /// A decryption by a session the record already held (no X3DH ran).
    init(plaintext: [UInt8], existingSession session: SessionState, promoted: Bool) {
        self.init(
            plaintext: plaintext, consumption: nil, promotedPreviousSession: promoted,
            remoteIdentityKey: session.remoteIdentityKey, session: session)
    }
}

extension SessionState {
    /// Whether this session knows `message`'s ratchet key (SPEC §3): it is the current remote
    /// ratchet key (DHr), or skipped message keys are stored under it (whatever their counter).
    func recognizesRatchetKey(of message: RatchetMessage) -> Bool {
        ratchet.remoteRatchetKey == message.ratchetKey || ratchet.skippedKeys.holdsKeys(for: message.ratchetKey)
    }

    /// Whether a message on a ratchet key this session does not know may be tried with a DH
    /// step here (`SessionRecord`'s bound): only in the most recent previous session, and only
    /// when the message skips no key on its old receiving chain (header.pn = Nr).
    func mayTakeDHStep(for message: RatchetMessage, isMostRecentPrevious: Bool) -> Bool {
        isMostRecentPrevious && UInt64(message.previousCounter) == ratchet.receiveCounter
    }
}
