// `import Verification` alone names everything its API takes: SessionKit's addresses, trust
// hooks and identity key pairs, and SignalPrimitives' Ed25519 keys (SessionKit re-exports them).
@_exported import SessionKit
