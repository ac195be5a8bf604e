import SignalPrimitives

/// The entry point for an app: encrypts to and decrypts from peer devices, starts sessions
/// from bundles, runs the group (sender-key) helpers and the prekey upkeep, over a
/// `ProtocolStore` and an `IdentityTrustEvaluator`, for the device at `localAddress`.
///
/// Post-quantum sessions. Give the manager a KEM (`SessionKitMLKEM`'s `SwiftCryptoMLKEM768`)
/// and it publishes only signed prekeys signed with `kem` = 1, each with KEM prekeys, starts a
/// hybrid session (PQXDH) from every bundle that carries a KEM prekey, and refuses classic
/// prekey messages to its `kem` = 1 signed prekeys (`invalidMessage`) unless
/// `SessionConfiguration.allowsClassicSessionsDuringMigration` is on. Without a KEM it refuses
/// a bundle that carries a KEM prekey (`kemUnavailable`). With
/// `SessionConfiguration.requirePostQuantum`, a bundle without a KEM prekey and any classic
/// prekey message are refused (`postQuantumRequired`), and so are sending on a classic session
/// and any message a classic session decrypts. Whatever the configuration, a peer device that
/// has had a post-quantum session with this one is pinned: a classic bundle for it is refused
/// (`postQuantumRequired`), and classic prekey messages to this device's old classic signed
/// prekeys are refused once `PreKeyPolicy.classicPreKeyMessageWindow` has passed since it
/// switched to KEM prekeys. See `isPostQuantum(sessionWith:)`.
///
/// Addresses. Both parties' addresses are bound into every session (SPEC §3), and the sender's
/// address into every group message (§5). `from:` in the decrypt calls is what the transport
/// says the sender is; a server that re-attributes a message to another address makes it fail
/// to decrypt (the session and the trust records stay those of the real sender).
///
/// Concurrency. Work on one peer device (one `ProtocolAddress`) is serialised: each call
/// loads the device's record, runs, and stores it while holding a per-address lock, in the
/// order the calls took the lock. Calls for different devices run concurrently: the actor is
/// reentrant across its `await`s, and the cryptographic work runs off the actor, so it uses
/// every core. Group calls are serialised per group (our chain) and per (group, sender).
/// Two managers on one store (an app and its notification extension on one database) do not
/// share locks, but never roll state back: every write is a compare-and-swap on the state's
/// generation (`ProtocolStore.commit(_:)`), and a call whose commit finds the state changed
/// starts again from the fresh state (`staleState` reaches the app only after
/// `staleStateRetries` retries). So no message key is used twice and no message decrypts twice.
/// Code that runs inside a call (a `beforePersisting` step) must not call back into the same
/// manager: such a call would wait for itself, and throws `SessionError.reentrantCall`. The
/// check follows the task and its child tasks; a call from an unstructured task
/// (`Task.detached`, or `Task {}` started in the step) cannot be recognised: for the same peer
/// or group it waits until the outer call finishes, so the step must not await it. Such a wait
/// is cancellable (`SessionError.cancelled`), and calls for other peers or groups do not wait.
///
/// Transactions and crash consistency. Every call fetches the state, computes the new state
/// on a copy, commits everything it changed in one `ProtocolStore.commit(_:)` (one
/// transaction), and only then returns:
/// - `decrypt`: decrypt → process → persist → acknowledge. The plaintext is returned only after
///   the advanced session (and, for a prekey message, the deletion of the one-time prekeys it
///   used and the record of its EK_A, in the same store call) was persisted. Acknowledge the
///   message to the server only after `decrypt` returned. A process that dies before the
///   write has changed nothing and gets the message again (the server redelivers it), which
///   then decrypts as the first time. One that dies after the write has lost nothing only if
///   the app already holds the plaintext: store it in `decrypt(_:from:beforePersisting:)`'s
///   step, which runs after decryption and before the write. When any step fails — a bad
///   message, the trust evaluator, the processing step, the store — no session, prekey or
///   chain is stored and the same bytes can be retried. Group messages (`groupDecrypt`) work
///   the same way.
/// - `encrypt`: encrypt → persist → send (SPEC §4: sending is durable). The ciphertext is
///   returned only after the advanced sending chain was persisted, so a message key is never
///   used twice by this manager, even across a crash. A process that dies after the write but
///   before sending loses one message number, which the receiver skips.
///
/// Trust. Checking never writes: before encrypting to a device, and when starting a session
/// from a bundle, the peer's identity key is evaluated (`untrustedIdentity` for a changed key
/// or one the app has not accepted); a refused bundle leaves the trust store as it was, so a
/// forged or stale bundle cannot make a verified contact unverified. A message from a changed
/// identity still decrypts (it is authentic): `decrypt` returns what the evaluator observed
/// (`DecryptedMessage.identityObservation`) and records the key once the message decrypted and
/// was processed, with the state: in the same transaction when the store keeps the trust
/// records and is the manager's trust evaluator (`SessionKitSQLite`'s store), otherwise with
/// the trust evaluator right after the commit succeeded. Encrypting to the device is then
/// refused until the app accepts the key. A message that fails to decrypt, whose processing
/// step fails or whose commit fails records nothing.
public actor SessionManager {
    enum LockKey: Hashable, Sendable {
        /// A one-time prekey a prekey message names, while its X3DH runs (taken after a peer
        /// lock, before `kemPreKey`).
        case oneTimePreKey(UInt32)
        /// A KEM prekey a prekey message names, while its X3DH runs (taken after a peer lock
        /// and a `oneTimePreKey` lock).
        case kemPreKey(UInt32)
        case peer(ProtocolAddress)
        case groupSending(GroupID)
        case groupReceiving(GroupID, ProtocolAddress)
    }

    /// The store holding identity, prekeys, sessions and sender keys.
    public nonisolated let store: any ProtocolStore
    /// The trust policy for peers' identity keys.
    public nonisolated let trust: any IdentityTrustEvaluator
    /// This device's address (bound into its sessions and group messages).
    public nonisolated let localAddress: ProtocolAddress
    /// The KEM for post-quantum sessions, if any.
    public nonisolated let kem: (any KeyEncapsulationMechanism)?
    /// The limits of sessions created by this manager and its post-quantum policy.
    public nonisolated let configuration: SessionConfiguration
    /// When prekeys are replenished, rotated and expired.
    public nonisolated let preKeyPolicy: PreKeyPolicy
    /// Where the send log is kept (SPEC §9), or `nil` when this manager keeps none (the default).
    public nonisolated let sendLog: (any SendLogStore)?
    /// How long and how much the send log keeps.
    public nonisolated let sendLogPolicy: SendLogPolicy
    /// Whether the send log's changes go in the store's commits (`sendLog` is the store and
    /// applies them there).
    nonisolated let sendLogInCommits: Bool
    /// When this device's sender-key chains are replaced (besides when a member leaves).
    public nonisolated let senderKeyPolicy: SenderKeyPolicy
    let clock: any WallClock
    let random: any RandomSource
    let locks = KeyedAsyncLock<LockKey>()
    /// Whether the store records identity keys in its commits (it keeps the trust records and
    /// is this manager's trust evaluator).
    private nonisolated let recordsIdentitiesInStore: Bool
    private var identityCache: IdentityKeyPair?
    private var registrationIDCache: RegistrationID?
    /// The recovery marks of senders this device has no session with (SPEC §9's limits for
    /// messages from made-up or forgotten senders), kept here rather than in the store, so that
    /// forged messages leave no row behind; the oldest go beyond
    /// `sessionlessMarkCapacity`.
    var sessionlessMarks = SessionlessRecoveryMarks()

    /// Creates a manager.
    /// - Parameters:
    ///   - store: where every state lives.
    ///   - trust: decides whether a peer's identity key may be used (the `Verification`
    ///     module's trust store, or the app's policy).
    ///   - localAddress: this device's address (user id and device id, as the server knows it).
    ///   - kem: the KEM for post-quantum sessions (`nil`: classic sessions only).
    ///   - configuration: the limits of sessions created here (SPEC §4 defaults) and the
    ///     post-quantum policy.
    ///   - preKeyPolicy: prekey batch size, low-water mark, rotation and grace period.
    ///   - senderKeyPolicy: after how many messages or how long our sender-key chains are
    ///     replaced (1,000 messages or 7 days by default).
    ///   - clock: the time for prekey upkeep (the system clock by default).
    ///   - random: the randomness for keys (the system CSPRNG by default; pass another source
    ///     only in tests).
    ///   - sendLog: where to keep the send log (SPEC §9), usually `store` itself
    ///     (`InMemoryProtocolStore` and `SQLiteProtocolStore` are send-log stores, and then write
    ///     each entry in the same transaction as the message's chain); `nil` (the default) keeps
    ///     no log. With a log, every application message sent (pairwise and group) is kept for
    ///     `sendLogPolicy`, and a retry notice that archives a session or re-sends a distribution
    ///     returns the messages to send again (`RetryNoticeOutcome.resend`). The log keeps
    ///     plaintexts on the device for a day: see the article "Recovering from Lost State".
    ///   - sendLogPolicy: how long and how much the send log keeps (24 hours, 10,000 entries).
    public init(
        store: any ProtocolStore, trust: any IdentityTrustEvaluator, localAddress: ProtocolAddress,
        kem: (any KeyEncapsulationMechanism)? = nil, configuration: SessionConfiguration = .default,
        preKeyPolicy: PreKeyPolicy = .default, senderKeyPolicy: SenderKeyPolicy = .default,
        clock: any WallClock = SystemWallClock(), random: any RandomSource = SystemRandomSource(),
        sendLog: (any SendLogStore)? = nil, sendLogPolicy: SendLogPolicy = .default
    ) {
        self.sendLog = sendLog
        self.sendLogPolicy = sendLogPolicy
        sendLogInCommits = sendLog.map { $0.appliesSendLogInCommits && ($0 as AnyObject) === (store as AnyObject) } ?? false
        self.store = store
        self.trust = trust
        recordsIdentitiesInStore = store.appliesIdentityRecords && (store as AnyObject) === (trust as AnyObject)
        self.localAddress = localAddress
        self.kem = kem
        self.configuration = configuration
        self.preKeyPolicy = preKeyPolicy
        self.senderKeyPolicy = senderKeyPolicy
        self.clock = clock
        self.random = random
    }

    // MARK: Prekeys

    /// Generates this device's first prekeys when the store holds none, otherwise runs the
    /// prekey upkeep at the clock's current time (rotate the signed prekey
    /// when due, remove expired ones, replenish one-time prekeys and one-time KEM prekeys
    /// below the low-water mark). Returns what to upload to the server (`PreKeyUpload`, which
    /// encodes itself): everything the first time, afterwards only what changed (`isEmpty`
    /// when nothing did). Every upload carries this installation's registration id (SPEC §9),
    /// which the server puts in the bundles it hands out. Run it at start-up and then regularly.
    /// - Throws: `SessionError.storage` when the store fails, `.primitive` when libsodium is
    ///   unusable, the errors of the KEM; nothing changed then.
    public func maintainPreKeys() async throws(SessionError) -> PreKeyUpload {
        let identity = try await localIdentity()
        let registrationID = try await localRegistrationID()
        let now = clock.now()
        let policy = preKeyPolicy
        let random = random
        let kem = kem
        do {
            return try await store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) -> PreKeyUpload in
                guard var current = keys else {
                    let fresh = try LocalPreKeys(identity: identity, now: now, policy: policy, kem: kem, random: random)
                    keys = fresh
                    return fresh.fullUpload(identityKey: identity.publicKey).with(registrationID: registrationID)
                }
                let upload = try current.maintain(identity: identity, now: now, policy: policy, kem: kem, random: random)
                keys = current
                return upload.with(registrationID: registrationID)
            }
        } catch {
            throw Self.stored(error, .preKeys)
        }
    }

    // MARK: Sessions

    /// Starts a session with `address` from its bundle, as the initiator (SPEC §3): a hybrid
    /// session when the bundle carries a KEM prekey. The new session becomes the device's
    /// current one; an existing one is kept as a previous session (its messages in flight
    /// still decrypt). Messages sent next are prekey messages until the peer replies; their
    /// prefix carries this installation's registration id (SPEC §9), and the session records
    /// the bundle's (`registrationID(of:)`).
    ///
    /// Order: the bundle's signatures and keys are checked first (so that a forged bundle never
    /// reaches the trust evaluator), then the post-quantum policy (the configuration, then the
    /// device's pin: a device that had a post-quantum session with this device never gets a
    /// classic one again, see `requiresPostQuantum(for:)`), then the identity key with the
    /// trust evaluator, then the record is stored.
    /// - Throws: `SessionError.invalidSignature` or `.invalidKey` for a bad bundle,
    ///   `.kemUnavailable` for a bundle with a KEM prekey and a manager without a KEM,
    ///   `.postQuantumRequired` for a bundle without one when post-quantum sessions are
    ///   required or the device is pinned to them, `.untrustedIdentity` when the trust evaluator refuses the bundle's identity
    ///   key, `.storage` when the store or the trust evaluator fails; no session changed then.
    public func processBundle(_ bundle: PreKeyBundle, for address: ProtocolAddress) async throws(SessionError) {
        let identity = try await localIdentity()
        let registrationID = try await localRegistrationID()
        try await exclusive(.peer(address)) { () async throws(SessionError) in
            let (localAddress, kem, configuration, random) = (localAddress, kem, configuration, random)
            let session = try await Self.compute { () throws(SessionError) in
                try SessionState(
                    initiatingWith: bundle, identity: identity, localAddress: localAddress, remoteAddress: address, kem: kem,
                    registrationID: registrationID, configuration: configuration, random: random)
            }
            try await retryingStaleState { () async throws(SessionError) in
                var record = try await loadSessionForUpdate(for: address) ?? SessionRecord()
                let loaded = record
                let decision = try await judgedOnStoredRecord(of: address, loadedAt: record.generation) {
                    () async throws(SessionError) -> TrustDecision in
                    try loaded.checkPostQuantumPin(for: session)
                    let decision = try await identityDecision(bundle.identityKey, for: address, knownDevice: !loaded.isEmpty)
                    if decision.isSuperseded { throw .supersededIdentity }
                    guard decision.allowsSending else { throw .untrustedIdentity }
                    try record.promote(session)
                    return decision
                }
                var commit = StoreCommit()
                commit.store(record, for: address)
                // A first use or a new device is recorded with the session (`allowsSending`
                // refused a change).
                try await self.commit(
                    commit, recording: recordsIdentity(decision.observation, for: address) ? bundle.identityKey : nil, for: address)
            }
        }
    }

    /// Encrypts `plaintext` for the device `address` with its current session, and stores
    /// the advanced session before returning the message (encrypt → persist → send).
    /// - Throws: `SessionError.noSession` when the device has no current session (process a
    ///   bundle first), `.postQuantumRequired` when post-quantum sessions are required and the
    ///   current session is classic (process a bundle with a KEM prekey), `.untrustedIdentity`
    ///   when the trust evaluator refuses the session's
    ///   identity key (a changed key the app has not accepted), `.chainExhausted` after 2^32
    ///   messages in one sending chain (start a new session), `.damagedState(.session)` when
    ///   the stored session does not load, `.storage` when the store or the trust evaluator
    ///   fails. Nothing changed when it throws.
    public func encrypt(_ plaintext: [UInt8], to address: ProtocolAddress) async throws(SessionError) -> [UInt8] {
        try await encrypt(plaintext, to: address, contentType: .application)
    }

    /// `encrypt(_:to:)` with the content type of the padded plaintext (SPEC §2):
    /// `.senderKeyDistribution` for a distribution (`distribute`), `.application` otherwise;
    /// with `requiredIdentity`, only into a session under that peer identity key (a logged
    /// message re-sent, SPEC §9).
    /// - Throws: the errors of `encrypt(_:to:)`, and `SessionError.supersededIdentity` when the
    ///   session's key is not `requiredIdentity`; nothing changed when it throws.
    func encrypt(
        _ plaintext: [UInt8], to address: ProtocolAddress, contentType: MessagePadding.ContentType,
        requiredIdentity: Ed25519.PublicKey? = nil
    ) async throws(SessionError) -> [UInt8] {
        try await exclusive(.peer(address)) { () async throws(SessionError) -> [UInt8] in
            try await retryingStaleState { () async throws(SessionError) -> [UInt8] in
                let loaded = try await loadSessionForUpdate(for: address, currentSessionSuffices: true)
                let (record, _) = try await judgedOnStoredRecord(of: address, loadedAt: loaded?.generation ?? 0) {
                    () async throws(SessionError) -> (SessionRecord, Ed25519.PublicKey) in
                    guard let record = loaded, let remote = record.remoteIdentityKey else { throw .noSession }
                    if let requiredIdentity, remote != requiredIdentity { throw .supersededIdentity }
                    try record.checkSendingPolicy(configuration)
                    let decision = try await identityDecision(remote, for: address, knownDevice: true)
                    // A session under a key the app replaced by accepting another is dead: start anew.
                    if decision.isSuperseded { throw .noSession }
                    guard decision.allowsSending else { throw .untrustedIdentity }
                    return (record, remote)
                }
                let (updated, message) = try await Self.compute { [record] () throws(SessionError) in
                    var record = record
                    let message = try record.encrypt(plaintext, contentType: contentType)
                    return (record, message)
                }
                var commit = StoreCommit()
                commit.store(updated, for: address)
                // Application content only: a distribution holds our chain key.
                if contentType == .application, let session = record.currentSession {
                    let ratchet = session.ratchet
                    commit.sendLog = sendLogChanges(
                        logging: plaintext, on: .pairwise(recipient: address, ratchetKey: ratchet.sendingRatchetKey.publicKey.rawRepresentation),
                        at: ratchet.sendCounter, peerIdentityKey: session.remoteIdentityKey)
                }
                try await commitWithSendLog(commit)
                return message
            }
        }
    }

    /// Decrypts a message from the device `address` (SPEC §4) and persists the result before
    /// returning it (decrypt → persist → acknowledge; see the type's documentation).
    ///
    /// `address` is what the transport says the sender is: a message re-attributed to another
    /// address fails (SPEC §3 binds both addresses). A process that dies after the session was
    /// persisted but before the app stored the returned plaintext loses that message (a
    /// redelivery is `duplicateMessage`); an app that cannot accept this stores the plaintext
    /// inside `decrypt(_:from:beforePersisting:)` instead.
    ///
    /// A prekey message goes to the session created from the same EK_A, or runs X3DH (hybrid
    /// with a KEM part) with the prekeys it names; the one-time prekeys X3DH used are deleted
    /// and its EK_A recorded in the same store call that stores the new session
    /// (`ProtocolStore.commit`), so a one-time prekey creates one session at most, even when two
    /// prekey messages naming it are decrypted concurrently, and a replayed prekey message whose
    /// session is gone is `duplicateMessage`.
    ///
    /// Only application content decrypts here: a sender-key distribution sent by
    /// `distributeSenderKey(for:to:)` (content type 0x02, SPEC §2) is `invalidPadding`, and the
    /// same bytes still go to `processSenderKeyDistribution(encrypted:for:from:)`.
    /// - Throws: the receiver's errors of SPEC §8 (`invalidMessage`, `duplicateMessage`,
    ///   `tooManySkippedMessages`, `noSession`, `unknownPreKey`, `invalidKey`, `invalidPadding`,
    ///   `unsupportedVersion`…, in SPEC §4's order), `SessionError.unknownPreKey` also when a
    ///   one-time prekey was consumed concurrently, `.damagedState` when a stored state does
    ///   not load,
    ///   `.storage` when the store or the trust evaluator fails. No session, prekey or chain
    ///   changed when it throws, and the same bytes can be retried.
    public func decrypt(_ bytes: [UInt8], from address: ProtocolAddress) async throws(SessionError) -> DecryptedMessage {
        try await decrypt(bytes, from: address, beforePersisting: { (_: DecryptedMessage) async throws(SessionError) in })
    }

    /// Decrypts a message from the device `address` like `decrypt(_:from:)`, and hands it to
    /// `process` after decryption and before the advanced session is persisted:
    /// decrypt → process → persist → acknowledge.
    ///
    /// Store the plaintext (or whatever the app derives from it) durably in `process`, then
    /// acknowledge the message to the server once this call returns. Crash consistency:
    /// - a process that dies before `process` finished, or between `process` and the session
    ///   write, has persisted no session change: the redelivered message decrypts again and
    ///   `process` runs again (at least once: make it idempotent, for example keyed by the
    ///   server's message id);
    /// - one that dies after the session write has lost nothing: `process` has run, and the
    ///   redelivered message is `duplicateMessage` (acknowledge it).
    /// - when another process on the same store decrypted the message first, this call's
    ///   commit is refused as stale and the call starts again from the fresh state, where the
    ///   message is `duplicateMessage`: `process` may then have run here too (once more, for
    ///   a message the other process also handed to its own step).
    /// - which replays are recognised (`duplicateMessage`): a ratchet message whose counter is
    ///   behind the current receiving chain with no skipped key for it; a prekey message whose
    ///   EK_A is recorded (its session was replaced or deleted), or whose session (found by its
    ///   EK_A) has moved past its chain. A ratchet message already decrypted is
    ///   `invalidMessage` once the session has moved on to the sender's next ratchet key (a
    ///   message of the new chain was decrypted since, here or by the other process): only the
    ///   current receiving chain is kept, and such a message cannot be told from a forged one.
    ///   An app whose other process may be ahead (or whose server may redeliver late) records
    ///   the server's message id in `process` and acknowledges a failed message it finds there.
    /// `process` throws `SessionError`: map the app's own failures (a database write that
    /// failed) to `SessionError.storage(_:)`; they reach the caller unchanged.
    /// - Throws: the errors of `decrypt(_:from:)`, and whatever `process` throws (the session is
    ///   then not persisted and the same bytes can be retried).
    public func decrypt(
        _ bytes: [UInt8], from address: ProtocolAddress,
        beforePersisting process: @Sendable (DecryptedMessage) async throws(SessionError) -> Void
    ) async throws(SessionError) -> DecryptedMessage {
        let message = try IncomingMessage(serialized: bytes)
        return try await decryptAndCommit(message, from: address, wipingPlaintext: false) {
            (decryption: SessionRecord.Decryption, identity: IdentityOutcome, _: inout StoreCommit)
                async throws(SessionError) -> DecryptedMessage in
            let decrypted = DecryptedMessage(
                plaintext: decryption.plaintext, sender: address, senderIdentityKey: decryption.remoteIdentityKey,
                identityObservation: identity.observation, establishedSession: decryption.establishedSession,
                isQuarantined: identity.isQuarantined)
            try await process(decrypted)
            return decrypted
        }
    }

    /// Decrypts `message` from `address` under the peer lock, asks the trust evaluator, runs
    /// `handle`, and persists the record (with the prekey consumption when X3DH ran) only when
    /// all of it succeeded. With `wipingPlaintext`, the decrypted plaintext is wiped on every
    /// path once `handle` is done with it (`handle` must not keep a copy). The padded plaintext
    /// must have `contentType` as its first byte (SPEC §2), else the message is
    /// `invalidPadding` and nothing is persisted.
    ///
    /// A prekey message that runs X3DH also holds the locks of the one-time prekey and the KEM
    /// prekey it names (taken after the peer lock, in that order) from loading the prekeys to
    /// the commit, so two establishments never consume the same one-time prekey: the second
    /// finds it gone (`unknownPreKey`) before it decrypts, and `handle` never sees a plaintext
    /// whose commit could still fail because of it. Prekey messages that name other prekeys
    /// (or none) do not wait for each other: a slow `handle` step (the app's
    /// `beforePersisting`) delays only what waits for the same peer or the same one-time key.
    func decryptAndCommit<Result: Sendable>(
        _ message: IncomingMessage, from address: ProtocolAddress, wipingPlaintext: Bool,
        contentType: MessagePadding.ContentType = .application,
        _ handle: (SessionRecord.Decryption, IdentityOutcome, inout StoreCommit) async throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        let identity = try await localIdentity()
        return try await exclusive(.peer(address)) { () async throws(SessionError) -> Result in
            try await retryingStaleState { () async throws(SessionError) -> Result in
                // A message is usually decided by the current session: the store may leave the
                // previous ones out (the body loads them when they are needed); a prekey message
                // that the current session did not create needs them all (another session, or X3DH).
                var record = try await loadSessionForUpdate(for: address, currentSessionSuffices: true) ?? SessionRecord()
                if case let .preKey(preKeyMessage) = message, record.omitsPreviousSessions,
                   record.currentSession?.isCreated(byPreKeyMessageWith: preKeyMessage.prefix) != true {
                    record = try await loadSession(for: address) ?? SessionRecord()
                }
                guard case let .preKey(preKeyMessage) = message, !record.holdsSession(createdBy: preKeyMessage.prefix) else {
                    return try await decryptAndCommit(
                        message, from: address, record: record, preKeys: PreKeySet(), identity: identity,
                        wipingPlaintext: wipingPlaintext, contentType: contentType, handle)
                }
                let prefix = preKeyMessage.prefix
                let keys = (prefix.oneTimePreKeyID.map { [LockKey.oneTimePreKey($0)] } ?? [])
                    + (prefix.kem.map { [LockKey.kemPreKey($0.preKeyID)] } ?? [])
                return try await exclusive(nested: keys) { () async throws(SessionError) -> Result in
                    let preKeys = try await loadPreKeys(for: prefix)
                    return try await decryptAndCommit(
                        message, from: address, record: record, preKeys: preKeys, identity: identity,
                        wipingPlaintext: wipingPlaintext, contentType: contentType, handle)
                }
            }
        }
    }

    /// The body of `decryptAndCommit` once the record and the prekeys are loaded (and locked).
    func decryptAndCommit<Result: Sendable>(
        _ message: IncomingMessage, from address: ProtocolAddress, record loaded: SessionRecord, preKeys: PreKeySet,
        identity: IdentityKeyPair, wipingPlaintext: Bool, contentType: MessagePadding.ContentType,
        _ handle: (SessionRecord.Decryption, IdentityOutcome, inout StoreCommit) async throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        let (localAddress, kem, configuration, random, now) = (localAddress, kem, configuration, random, clock.now())
        let computed: (SessionRecord, SessionRecord.Decryption)
        do throws(SessionError) {
            computed = try await Self.compute { () throws(SessionError) in
                var record = loaded
                // Skipped keys past `skippedKeyMaxAge` no longer decrypt (deleted with this
                // message's commit); the keys this message skips are stamped with its time.
                record.ageSkippedKeys(now: now, maxAge: configuration.skippedKeyMaxAge)
                let decryption = try record.decrypt(
                    message, identity: identity, localAddress: localAddress, remoteAddress: address, preKeys: preKeys, kem: kem,
                    configuration: configuration, random: random, contentType: contentType)
                record.ageSkippedKeys(now: now, maxAge: configuration.skippedKeyMaxAge)
                return (record, decryption)
            }
        } catch {
            // The current session did not decrypt it: the previous sessions decide, so the
            // whole record is needed.
            if loaded.omitsPreviousSessions {
                return try await decryptAndCommit(
                    message, from: address, record: try await loadSession(for: address) ?? SessionRecord(), preKeys: preKeys,
                    identity: identity, wipingPlaintext: wipingPlaintext, contentType: contentType, handle)
            }
            // Another process on the store may have changed the record while this one
            // decrypted (a session it created, a message it decrypted): judge the message on the
            // fresh record before reporting it.
            try await throwStaleIfChanged(sessionOf: address, loadedAt: loaded.generation)
            throw error
        }
        var (record, decryption) = computed
        defer { if wipingPlaintext { decryption.wipePlaintext() } }
        let identityOutcome = try await identityOutcome(of: decryption, from: address, knownDevice: !loaded.isEmpty)
        // Setting the session aside moves it among the previous sessions: with the whole record.
        if identityOutcome.isQuarantined, loaded.omitsPreviousSessions {
            decryption.wipePlaintext()
            return try await decryptAndCommit(
                message, from: address, record: try await loadSession(for: address) ?? SessionRecord(), preKeys: preKeys,
                identity: identity, wipingPlaintext: wipingPlaintext, contentType: contentType, handle)
        }
        // A message under a key that is not the user's (quarantined) never makes its session the
        // one we send to.
        if identityOutcome.isQuarantined { record.setAsideCurrentSession(restoring: loaded.currentSession) }
        var commit = StoreCommit()
        let result = try await handle(decryption, identityOutcome, &commit)
        commit.store(record, for: address)
        commit.preKeyConsumption = decryption.consumption
        // The key is recorded once the message decrypted and was processed, with the state
        // (in the same transaction when the store keeps the trust records).
        try await self.commit(commit, recording: identityOutcome.recordsKey ? decryption.remoteIdentityKey : nil, for: address)
        return result
    }

    // MARK: Helpers

    /// Runs the cryptographic work of a call off the actor, on the concurrent executor, so
    /// that calls for different peers (each holding its own lock) compute in parallel; the
    /// actor only orders locks and store calls.
    @concurrent
    nonisolated static func compute<Result: Sendable>(
        _ work: @Sendable () throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        try work()
    }

    /// How many times a call is retried from the fresh state when its commit finds the state
    /// changed (`staleState`: another process or manager on the same store wrote it). Each
    /// refusal means another writer committed, so the writers as a whole always progress; the
    /// bound only keeps one call from waiting forever behind a busy writer.
    public static let staleStateRetries = 32

    /// Runs `body` (load, compute, commit) again from the fresh state while its commit is
    /// refused as stale, at most `staleStateRetries` more times.
    func retryingStaleState<Result: Sendable>(
        _ body: () async throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        var retries = 0
        while true {
            do throws(SessionError) {
                return try await body()
            } catch where error == .staleState && retries < Self.staleStateRetries {
                retries += 1
                await Task.yield()
            }
        }
    }

    /// Runs `body`, which judges a record loaded for update (possibly the store's cached copy)
    /// at generation `generation`; when it throws, the error stands only if the stored record is
    /// still that one, else the call runs again from the fresh state (`staleState`).
    func judgedOnStoredRecord<Result>(
        of address: ProtocolAddress, loadedAt generation: UInt64, _ body: () async throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        do throws(SessionError) {
            return try await body()
        } catch {
            if error != .staleState { try await throwStaleIfChanged(sessionOf: address, loadedAt: generation) }
            throw error
        }
    }

    /// Throws `staleState` (so that the call runs again from the fresh state) when the stored
    /// record of `address` is no longer the one loaded at generation `generation`.
    private func throwStaleIfChanged(sessionOf address: ProtocolAddress, loadedAt generation: UInt64) async throws(SessionError) {
        let stored = try await loadSession(for: address)
        if (stored?.generation ?? 0) != generation { throw .staleState }
    }

    /// Commits `commit`, recording `identityKey` (when given) for `address` in the same
    /// transaction when the store keeps the trust records and is the trust evaluator, otherwise
    /// with the trust evaluator once the commit succeeded (a failure then leaves the state
    /// committed and the key unrecorded: the next message observes it again).
    func commit(
        _ commit: StoreCommit, recording identityKey: Ed25519.PublicKey?, for address: ProtocolAddress
    ) async throws(SessionError) {
        var commit = commit
        if let identityKey, recordsIdentitiesInStore { commit.recordIdentity(identityKey, for: address) }
        try await store.commit(commit)
        if let identityKey, !recordsIdentitiesInStore { _ = try await recordIdentity(identityKey, for: address) }
    }

    /// The managers whose calls are in progress in the current task (and its child tasks).
    @TaskLocal private static var callsInProgress: Set<ObjectIdentifier> = []

    /// Runs `body` holding `key`. A call that starts while the same task is already inside a
    /// call of this manager (a `beforePersisting` step calling back into the manager) would wait
    /// for a lock its own task holds, or take locks in the other order than the manager does:
    /// it throws `reentrantCall` instead. The one nesting the manager does itself (`nested`:
    /// a sender-key distribution stored inside the pairwise decryption that carried it) always
    /// takes the peer lock first and the group lock second.
    func exclusive<Result: Sendable>(
        _ key: LockKey, nested: Bool = false, _ body: () async throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        let manager = ObjectIdentifier(self)
        guard nested || !Self.callsInProgress.contains(manager) else { throw .reentrantCall }
        var active = Self.callsInProgress
        active.insert(manager)
        let outcome: Swift.Result<Result, SessionError> = await Self.$callsInProgress.withValue(active) {
            do throws(SessionError) {
                return .success(try await locks.withLock(key, body))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// Runs `body` holding every key of `keys` (distinct, in the order every multi-key call
    /// uses), taken in one call to the lock; not nested in another call of this manager
    /// (`reentrantCall` otherwise).
    func exclusive<Result: Sendable>(
        all keys: [LockKey], _ body: () async throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        let manager = ObjectIdentifier(self)
        guard !Self.callsInProgress.contains(manager) else { throw .reentrantCall }
        var active = Self.callsInProgress
        active.insert(manager)
        let outcome: Swift.Result<Result, SessionError> = await Self.$callsInProgress.withValue(active) {
            do throws(SessionError) {
                try await locks.acquire(all: keys)
            } catch {
                return .failure(error)
            }
            do throws(SessionError) {
                let result = try await body()
                await locks.release(all: keys)
                return .success(result)
            } catch {
                await locks.release(all: keys)
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// Runs `body` holding every key of `keys`, taken in order, nested inside a lock the call
    /// already holds (the prekey locks inside the peer lock).
    private func exclusive<Result: Sendable>(
        nested keys: some Collection<LockKey>, _ body: () async throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        guard let first = keys.first else { return try await body() }
        return try await exclusive(first, nested: true) { () async throws(SessionError) -> Result in
            try await exclusive(nested: keys.dropFirst(), body)
        }
    }

    /// The local identity, read from the store once.
    func localIdentity() async throws(SessionError) -> IdentityKeyPair {
        if let identityCache { return identityCache }
        let identity = try await loadLocalIdentity()
        identityCache = identity
        return identity
    }

    /// This installation's registration id (SPEC §9), read from the store once: the one every
    /// prekey upload and every prekey message this device sends carries.
    /// - Throws: `SessionError.damagedState(.identity)` when the stored id does not load,
    ///   `.storage` when the store fails.
    public func localRegistrationID() async throws(SessionError) -> RegistrationID {
        if let registrationIDCache { return registrationIDCache }
        let registrationID: RegistrationID
        do { registrationID = try await store.localRegistrationID() } catch { throw Self.stored(error, .identity) }
        registrationIDCache = registrationID
        return registrationID
    }

    /// The registration id (SPEC §9) of the device `address` in its current session (the one
    /// `encrypt(_:to:)` uses): from the bundle the session was started with, or from the prefix
    /// of the prekey message that started it. Tell your server, with each message for the
    /// device, which id you believe it has, so that it can refuse a message for a device that
    /// was reinstalled since. `nil` when the device has no current session, or its session's
    /// bundle or prefix carried no id (a peer that sets no flag bit 2).
    /// - Throws: `SessionError.damagedState(.session)` when the stored record does not load,
    ///   `.storage` when the store fails.
    public func registrationID(of address: ProtocolAddress) async throws(SessionError) -> RegistrationID? {
        try await loadSession(for: address)?.currentSession?.remoteRegistrationID
    }
}
