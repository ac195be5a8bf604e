import Foundation
import RelayWire
import SignalPrimitives
import SessionKit

/// The relay's state, in memory: the prekey directory and one mailbox per device.
///
/// It holds public prekey material and opaque envelopes only. It hands out each one-time
/// prekey and each one-time KEM prekey at most once (removing it as it builds the bundle), and
/// the device's last-resort KEM prekey when no one-time KEM prekey is left. An envelope stays in
/// its recipient's mailbox until the recipient acknowledges it, and is delivered again on every
/// connection until then (decrypt → persist → acknowledge on the client).
actor Relay {
    /// An envelope waiting for its recipient's acknowledgement.
    private struct Queued {
        let id: UInt64
        let from: ProtocolAddress
        let envelope: String
    }

    /// The connection currently speaking for a device: where to push its frames.
    private struct Connection {
        let id: Int
        let frames: AsyncStream<ServerFrame>.Continuation
    }

    /// Each device's published prekeys (SessionKit's `PublishedPreKeys`: every key checked as it
    /// arrives, each one-time key handed out once, the last-resort KEM prekey after them).
    private var directory: [ProtocolAddress: PublishedPreKeys] = [:]
    private var mailboxes: [ProtocolAddress: [Queued]] = [:]
    private var connections: [ProtocolAddress: Connection] = [:]
    private var nextMessageID: UInt64 = 1
    private var nextConnectionID = 1
    private var nextAttachmentID = 1
    /// Where attachment ciphertexts are kept, one file each.
    private let attachments: URL
    private let log: @Sendable (String) -> Void

    /// Creates an empty relay that keeps attachment ciphertexts in the folder `attachments`
    /// (created if missing) and reports what it does (never a plaintext: it has none) to `log`.
    init(attachments: URL, log: @escaping @Sendable (String) -> Void) throws {
        self.attachments = attachments
        self.log = log
        try FileManager.default.createDirectory(at: attachments, withIntermediateDirectories: true)
    }

    // MARK: Connections

    /// Registers the connection `frames` for `device` (replacing an older one), and pushes the
    /// envelopes queued for it. Returns the connection's id (for `disconnect`).
    func connect(_ device: ProtocolAddress, frames: AsyncStream<ServerFrame>.Continuation) -> Int {
        let id = nextConnectionID
        nextConnectionID += 1
        connections[device]?.frames.finish()
        connections[device] = Connection(id: id, frames: frames)
        let queued = mailboxes[device] ?? []
        log("\(device) connected, \(queued.count) envelope(s) queued")
        frames.yield(.welcome(queued: queued.count))
        for item in queued {
            frames.yield(.deliver(message: item.id, from: item.from, envelope: item.envelope))
        }
        return id
    }

    /// Forgets the connection `id` of `device` (when it is still the current one).
    func disconnect(_ device: ProtocolAddress, connection id: Int) {
        guard connections[device]?.id == id else { return }
        connections[device] = nil
        log("\(device) disconnected")
    }

    // MARK: Prekeys

    /// Publishes `upload` for `device`. An upload with a new identity key or a new registration
    /// id (SPEC §9: a reinstalled or restored device) must be complete (carry a signed prekey)
    /// and replaces everything published for the device: it registered again.
    func publish(_ upload: PreKeyUpload, for device: ProtocolAddress) throws(RelayError) {
        do {
            if var published = directory[device], published.identityKey == upload.identityKey,
               upload.registrationID == nil || published.registrationID == nil || upload.registrationID == published.registrationID {
                try published.merge(upload)
                directory[device] = published
                log("\(device) published \(upload.oneTimePreKeys.count) one-time prekey(s), "
                    + "\(upload.oneTimeKEMPreKeys.count) one-time KEM prekey(s)"
                    + (upload.signedPreKey == nil ? "" : ", a new signed prekey"))
                return
            }
            let replacing = directory[device] != nil
            directory[device] = try PublishedPreKeys(registering: upload)
            log("\(device) \(replacing ? "registered again (a NEW identity key or registration id)" : "registered"): "
                + "\(upload.oneTimePreKeys.count) one-time prekey(s), \(upload.oneTimeKEMPreKeys.count) one-time KEM prekey(s)"
                + (upload.lastResortKEMPreKey == nil ? "" : ", a last-resort KEM prekey"))
        } catch {
            throw RelayError("the upload of \(device) was refused: \(error) (a first upload, or one with a new identity key, must carry a signed prekey)")
        }
    }

    /// One bundle per registered device of `user`, each taking (and removing) the device's next
    /// one-time prekey and one-time KEM prekey, or its last-resort KEM prekey when none is left.
    func bundles(of user: String, for requester: ProtocolAddress) -> [PublishedBundle] {
        var result: [PublishedBundle] = []
        for (device, var published) in directory.filter({ $0.key.userID == user }).sorted(by: { $0.key.deviceID < $1.key.deviceID }) {
            let bundle = published.takeBundle()
            directory[device] = published
            var note = bundle.oneTimePreKey.map { "one-time prekey \($0.id)" } ?? "no one-time prekey left"
            if let kem = bundle.kemPreKey {
                note += kem == published.lastResortKEMPreKey ? ", last-resort KEM prekey \(kem.id)" : ", one-time KEM prekey \(kem.id)"
            }
            log("bundle of \(device) for \(requester): \(note)")
            result.append(PublishedBundle(device: device.deviceID, bundle: WireCoding.base64(bundle.serialized), note: note))
        }
        return result
    }

    /// How many one-time prekeys and one-time KEM prekeys are left for `device` (what it
    /// replenishes from: SessionKit's `replenishPreKeys(serverOneTimePreKeyCount:…)`).
    func preKeyCount(of device: ProtocolAddress) -> (oneTime: Int, oneTimeKEM: Int) {
        guard let published = directory[device] else { return (0, 0) }
        return (published.oneTimePreKeyCount, published.oneTimeKEMPreKeyCount)
    }

    // MARK: Envelopes

    /// Checks a send request for `user` against the user's device directory (SessionKit's
    /// `DeviceDirectory`, built from the devices' `PublishedPreKeys`, each with the registration
    /// id it published): `devices` must name every device of the user (the sender's own device
    /// left out) with its current registration id. When it does, queues `messages` (each for a
    /// named device) and returns an empty mismatch; otherwise queues nothing and returns what
    /// is stale, missing and extra, for the sender to fix (Signal's 409/410).
    func send(
        _ messages: [DeviceEnvelope], toUser user: String, naming devices: [DeviceRegistration], from sender: ProtocolAddress
    ) throws(RelayError) -> DeviceListMismatch {
        var request: [UInt32: RegistrationID?] = [:]
        for entry in devices {
            guard request[entry.device] == nil else { throw RelayError("device \(entry.device) is named twice") }
            guard let raw = entry.registrationID else {
                request[entry.device] = .some(nil)
                continue
            }
            guard let id = RegistrationID(rawValue: raw) else { throw RelayError("\(raw) is not a registration id") }
            request[entry.device] = .some(id)
        }
        guard messages.allSatisfy({ request[$0.device] != nil }) else { throw RelayError("a message is for a device the request does not name") }
        var queued: [(ProtocolAddress, String)] = []
        for message in messages {
            do { queued.append((try ProtocolAddress(userID: user, deviceID: message.device), message.envelope)) } catch {
                throw RelayError("\(user) is not a user id")
            }
        }
        let published = Dictionary(uniqueKeysWithValues: directory.filter { $0.key.userID == user }.map { ($0.key.deviceID, $0.value) })
        let mismatch: DeviceListMismatch
        do {
            mismatch = try DeviceDirectory(published).check(request, excludingSenderDevice: sender.userID == user ? sender.deviceID : nil)
        } catch {
            throw RelayError("\(error)")
        }
        guard mismatch.isEmpty else {
            log("refused \(messages.count) envelope(s) \(sender) -> \(user): stale \(mismatch.stale), missing \(mismatch.missing), extra \(mismatch.extra)")
            return mismatch
        }
        for (recipient, envelope) in queued { send(envelope, from: sender, to: [recipient]) }
        return mismatch
    }

    /// Queues `envelope` from `sender` for each of `recipients`, pushing it at once to those
    /// connected. The envelope is opaque here: only its size is logged.
    func send(_ envelope: String, from sender: ProtocolAddress, to recipients: [ProtocolAddress]) {
        for recipient in recipients {
            let item = Queued(id: nextMessageID, from: sender, envelope: envelope)
            nextMessageID += 1
            mailboxes[recipient, default: []].append(item)
            let online = connections[recipient] != nil
            connections[recipient]?.frames.yield(.deliver(message: item.id, from: sender, envelope: envelope))
            log("envelope \(item.id) \(sender) -> \(recipient): \(envelope.utf8.count) bytes, "
                + (online ? "delivered" : "queued (offline)"))
        }
    }

    /// Deletes the acknowledged envelope `id` from `device`'s mailbox.
    func acknowledge(_ id: UInt64, by device: ProtocolAddress) {
        mailboxes[device]?.removeAll { $0.id == id }
    }

    // MARK: Attachments

    /// Keeps an attachment's ciphertext (a file in the attachments folder) and returns its id.
    /// The relay never has the key (it is in the pointer, inside an envelope).
    func storeAttachment(_ ciphertext: [UInt8], from sender: ProtocolAddress) throws(RelayError) -> String {
        let id = "a\(nextAttachmentID)"
        nextAttachmentID += 1
        let file = attachments.appendingPathComponent(id)
        do { try Data(ciphertext).write(to: file, options: .atomic) } catch { throw RelayError("cannot store the attachment: \(error)") }
        log("stored attachment \(id) from \(sender): \(ciphertext.count) bytes of ciphertext in \(file.path)")
        return id
    }

    /// The ciphertext of attachment `id`.
    func attachment(_ id: String, for requester: ProtocolAddress) throws(RelayError) -> [UInt8] {
        guard id.utf8.count < 32, id.allSatisfy({ $0.isLetter || $0.isNumber }),
              let data = FileManager.default.contents(atPath: attachments.appendingPathComponent(id).path) else {
            throw RelayError("no attachment \(id)")
        }
        log("attachment \(id) fetched by \(requester): \(data.count) bytes")
        return Array(data)
    }
}

/// A refused request, with the reason the client gets back.
struct RelayError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
